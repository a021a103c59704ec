import { afterEach, expect, it } from 'vitest';
import type { ProcessRuntime } from '../../sandbox/process/process-runtime.ts';
import { isGone, processRuntime, request } from './process-helpers.ts';

let runtime: ProcessRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

it('retires a child after recycleAfterRuns runs and serves the next run from its replacement', async () => {
  runtime = processRuntime({ children: 1, recycleAfterRuns: 3 });
  await runtime.ready();
  const [first] = runtime.processes();
  for (let i = 0; i < 3; i++) {
    expect(await runtime.run(request(`return ${i}`))).toMatchObject({ ok: true, resultJson: String(i) });
  }
  expect(await runtime.run(request('return "next"'))).toMatchObject({ ok: true, resultJson: '"next"' });
  const [second] = runtime.processes();
  expect(second.pid).not.toBe(first.pid);
  await expect.poll(() => isGone(first.pid), { timeout: 10_000 }).toBe(true);
});
