import { afterAll, expect, it } from 'vitest';
import { createFakeHost, failureOf, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('a heap bomb fails with kind memory, in bounded time, and the next run succeeds', async () => {
  const outcome = await host.run('const hoard = [];\nwhile (true) hoard.push(new Array(100_000).fill(1.5));', { limits: { memoryMiB: 16, timeoutMs: 20_000 } });
  expect(failureOf(outcome).kind).toBe('memory');
  expect(failureOf(outcome).message).toMatch(/16 MiB/);
  expect(resultOf(await host.run('return 1 + 1'))).toBe(2);
});

it('a heap bomb after an await is caught too', async () => {
  const outcome = await host.run('await null;\nconst hoard = [];\nwhile (true) hoard.push(new Array(100_000).fill(1.5));', { limits: { memoryMiB: 16, timeoutMs: 20_000 } });
  expect(failureOf(outcome).kind).toBe('memory');
});

it.each([
  ['a buffer larger than the heap', 'const buffer = new Uint8Array(64 * 1024 * 1024);\nreturn buffer.length;'],
  ['string doubling', 'let s = "x";\nfor (;;) s += s;'],
])('%s reports kind memory, not a generic exception', async (_label, code) => {
  const failure = failureOf(await host.run(code, { limits: { memoryMiB: 16, timeoutMs: 20_000 } }));
  expect(failure.kind).toBe('memory');
  expect(resultOf(await host.run('return 3'))).toBe(3);
});
