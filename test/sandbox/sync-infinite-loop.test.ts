import { afterAll, expect, it } from 'vitest';
import { createFakeHost, failureOf, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('a synchronous infinite loop fails with kind timeout at the deadline, and the next run succeeds', async () => {
  const outcome = await host.run('while (true) {}', { limits: { timeoutMs: 300 } });
  expect(failureOf(outcome).kind).toBe('timeout');
  expect(failureOf(outcome).message).toMatch(/300 ms/);
  expect(resultOf(await host.run('return "alive"'))).toBe('alive');
});
