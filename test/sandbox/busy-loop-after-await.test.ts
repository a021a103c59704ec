import { afterAll, expect, it } from 'vitest';
import { createFakeHost, failureOf, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('a busy loop after an await (beyond isolated-vm timeout reach) dies at the deadline', async () => {
  const outcome = await host.run('await tools.ping({});\nfor (;;) {}', { tools: { ping: () => 'pong' }, limits: { timeoutMs: 300 } });
  expect(failureOf(outcome).kind).toBe('timeout');
  expect(resultOf(await host.run('return 2'))).toBe(2);
});

it('a timer that never settles counts against the same deadline', async () => {
  const outcome = await host.run('await new Promise(() => setTimeout(() => {}, 60_000));', { limits: { timeoutMs: 200 } });
  expect(failureOf(outcome).kind).toBe('timeout');
});
