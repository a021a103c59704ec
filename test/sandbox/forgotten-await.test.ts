import { afterAll, expect, it } from 'vitest';
import { createFakeHost, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('stub calls that were never awaited are listed in logs when the run ends', async () => {
  let release: () => void = () => undefined;
  const slow = new Promise<void>((resolve) => (release = resolve));
  const outcome = await host.run(
    `tools.slow({});
     tools.fast({});
     void tools.fast({ bad: undefined });
     await tools.fast({});
     const p = tools.fast({}); await Promise.all([p]);
     return 'done';`,
    { tools: { slow: () => slow, fast: () => 1 } },
  );
  release();
  expect(resultOf(outcome)).toBe('done');
  expect(outcome.logs).toEqual([
    '[ptc] warning: tools["slow"](…) (call #1, never awaited): it was still running and is cancelled; await every tool call',
    '[ptc] warning: tools["fast"](…) (call #2, never awaited): its outcome was dropped; await every tool call',
    '[ptc] warning: tools["fast"](…) (never awaited): its outcome was dropped; await every tool call',
  ]);
});

it('awaited and .then/.catch-handled calls are not listed', async () => {
  const outcome = await host.run('await tools.fast({}).then((v) => v);\nawait tools.fast({}).catch(() => 0);\nreturn 1;', { tools: { fast: () => 1 } });
  expect(outcome.logs).toEqual([]);
});

it('a rejection the program leaves unhandled fails the run with kind exception at its line', async () => {
  const outcome = await host.run('const x = 1;\nPromise.reject(new Error("lost"));\nreturn x;');
  expect(outcome.ok).toBe(false);
  if (outcome.ok) return;
  expect(outcome.failure.kind).toBe('exception');
  expect(outcome.failure.message).toMatch(/^Error: lost \(agent\.ts:2:16\)/);
});
