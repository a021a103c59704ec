import { afterAll, expect, it } from 'vitest';
import { createFakeHost, failureOf, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('a result over maxResultBytes fails with kind output-limit, and the next run succeeds', async () => {
  const outcome = await host.run('return "z".repeat(2_000);', { limits: { maxResultBytes: 1_000 } });
  expect(failureOf(outcome).kind).toBe('output-limit');
  expect(failureOf(outcome).message).toMatch(/1000-byte limit/);
  expect(resultOf(await host.run('return "ok"'))).toBe('ok');
});

it('multi-byte characters are counted in bytes', async () => {
  const outcome = await host.run('return "é".repeat(600);', { limits: { maxResultBytes: 1_000 } });
  expect(failureOf(outcome).kind).toBe('output-limit');
});
