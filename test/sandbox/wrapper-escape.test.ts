import { afterAll, expect, it } from 'vitest';
import { createFakeHost, failureOf, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('a program that closes the function wrapper early still runs off the host event loop, under the deadline', async () => {
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 10);
  const started = Date.now();
  const outcome = await host.run('})();\nwhile (true) {}\n(async function () {', { limits: { timeoutMs: 300 } });
  clearInterval(ticker);
  expect(failureOf(outcome).kind).toBe('timeout');
  expect(Date.now() - started).toBeLessThan(3_000);
  // The host's own timers kept firing while the loop spun.
  expect(ticks).toBeGreaterThan(3);
  expect(resultOf(await host.run('return "fine"'))).toBe('fine');
});
