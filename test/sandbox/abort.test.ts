import { afterAll, expect, it } from 'vitest';
import { createFakeHost, failureOf, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('an outer abort mid-run disposes the isolate and reports kind abort with the logs so far', async () => {
  const controller = new AbortController();
  let entered: () => void = () => undefined;
  const inSlowTool = new Promise<void>((resolve) => (entered = resolve));
  const run = host.run('console.log("before");\nawait tools.slow({});\nconsole.log("after");', {
    tools: {
      slow: () => {
        entered();
        return new Promise(() => undefined);
      },
    },
    signal: controller.signal,
  });
  await inSlowTool;
  controller.abort();
  const outcome = await run;
  expect(failureOf(outcome).kind).toBe('abort');
  expect(outcome.logs).toEqual(['before']);
  expect(resultOf(await host.run('return "next"'))).toBe('next');
});

it('an already-aborted signal runs nothing', async () => {
  const outcome = await host.run('console.log("ran")', { signal: AbortSignal.abort() });
  expect(failureOf(outcome).kind).toBe('abort');
  expect(outcome.logs).toEqual([]);
});

it('a fatal call outcome (call-limit) ends the run with that kind', async () => {
  const outcome = await host.run('for (let i = 0; ; i++) await tools.count({ i });', {
    tools: {
      count: (args) => {
        if ((args as { i: number }).i >= 3) throw { fatal: { ok: false, fatal: { kind: 'call-limit', message: 'more than 3 tool calls' } } };
        return (args as { i: number }).i;
      },
    },
  });
  expect(failureOf(outcome)).toEqual({ kind: 'call-limit', message: 'more than 3 tool calls' });
});
