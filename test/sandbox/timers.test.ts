import { afterAll, expect, it } from 'vitest';
import { createFakeHost, failureOf, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('setTimeout runs callbacks in delay order with their arguments; clearTimeout cancels', async () => {
  const outcome = await host.run(
    `const order: string[] = [];
     await new Promise<void>((resolve) => {
       setTimeout((tag: string) => order.push(tag), 20, 'late');
       const cancelled = setTimeout(() => order.push('cancelled'), 5);
       clearTimeout(cancelled);
       setTimeout(() => order.push('early'), 1);
       setTimeout(resolve, 40);
     });
     return order;`,
  );
  expect(resultOf(outcome)).toEqual(['early', 'late']);
});

it('a timer pending when the program returns never fires and the run ends at once', async () => {
  const outcome = await host.run('setTimeout(() => console.log("too late"), 2_000);\nreturn "early";');
  expect(resultOf(outcome)).toBe('early');
  // Had the run waited for the timer, its line would be in the logs.
  expect(outcome.logs).toEqual([]);
});

it('setTimeout refuses strings (no eval through timers)', async () => {
  const failure = failureOf(await host.run('setTimeout("console.log(1)" as any, 1);'));
  expect(failure.message).toMatch(/setTimeout needs a function/);
});

it('an error thrown in a timer callback fails the run with kind exception', async () => {
  const failure = failureOf(
    await host.run('setTimeout(() => {\n  throw new Error("tick");\n}, 1);\nawait new Promise((r) => setTimeout(r, 1_000));'),
  );
  expect(failure.kind).toBe('exception');
  expect(failure.message).toMatch(/^Error: tick \(agent\.ts:2:9\) in a setTimeout callback/);
});
