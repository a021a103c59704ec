import { afterAll, expect, it } from 'vitest';
import { createFakeHost, failureOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it.each([
  ['return { when: new Date(0) };', /result\.when is a Date/],
  ['return { n: NaN };', /result\.n is NaN/],
  ['return [1, () => 2];', /result\[1\] is a function/],
  ['const a: any[] = []; a.push(a); return a;', /result\[0\] is a cycle/],
  ['return { big: 1n };', /result\.big is a bigint/],
  ['let v: unknown = 0; for (let i = 0; i < 1_001; i++) v = [v]; return v;', /nested deeper than 1000 levels/],
])('%s fails invalid-output naming what was wrong', async (code, message) => {
  const failure = failureOf(await host.run(code));
  expect(failure.kind).toBe('invalid-output');
  expect(failure.message).toMatch(message);
});

it('1,000 levels is still fine', async () => {
  const outcome = await host.run('let v: unknown = 0; for (let i = 0; i < 1_000; i++) v = [v]; return v;');
  expect(outcome.ok).toBe(true);
});

it('returning nothing gives no result', async () => {
  const outcome = await host.run('console.log("hi")');
  expect(outcome).toMatchObject({ ok: true, logs: ['hi'], usage: { logBytes: 3 } });
  expect(outcome).not.toHaveProperty('resultJson');
  expect(outcome.usage).not.toHaveProperty('resultBytes');
});
