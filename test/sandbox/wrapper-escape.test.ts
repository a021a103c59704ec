import { afterAll, expect, it } from 'vitest';
import { createFakeHost, failureOf, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('a program that closes the function wrapper early still runs off the host event loop, under the deadline', async () => {
  const settled: string[] = [];
  const run = host.run('})();\nwhile (true) {}\n(async function () {', { limits: { timeoutMs: 300 } }).then((outcome) => {
    settled.push('run');
    return outcome;
  });
  // A host timer due long before the deadline fires while the loop spins: the host's event loop was never blocked.
  await new Promise((resolve) => setTimeout(resolve, 20));
  settled.push('host timer');
  expect(failureOf(await run).kind).toBe('timeout');
  expect(settled).toEqual(['host timer', 'run']);
  expect(resultOf(await host.run('return "fine"'))).toBe('fine');
});
