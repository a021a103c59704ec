import { afterAll, expect, it } from 'vitest';
import { createFakeHost, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('stub results are deep-frozen: mutation throws in (strict) program code', async () => {
  const outcome = await host.run(
    `const v = await tools.get({});
     const attempts: string[] = [];
     for (const mutate of [() => { (v as any).a = 2; }, () => { (v as any).list.push(4); }, () => { (v as any).list[0].x = 9; }]) {
       try { mutate(); attempts.push('mutated'); } catch (e) { attempts.push((e as Error).constructor.name); }
     }
     return { attempts, frozen: Object.isFrozen(v) && Object.isFrozen(v.list[0]), v };`,
    { tools: { get: () => ({ a: 1, list: [{ x: 1 }, 2, 3] }) } },
  );
  expect(resultOf(outcome)).toEqual({ attempts: ['TypeError', 'TypeError', 'TypeError'], frozen: true, v: { a: 1, list: [{ x: 1 }, 2, 3] } });
});

it('a program that adds enumerable keys to Object.prototype still gets deep-frozen values, and its own object stays its own', async () => {
  const outcome = await host.run(
    `const mine = { n: 1 };
     Object.defineProperty(Object.prototype, 'extra', { value: mine, enumerable: true, configurable: true, writable: true });
     const v = await tools.get({});
     delete (Object.prototype as any).extra;
     return { deep: Object.isFrozen(v.a) && Object.isFrozen(v.a.b) && Object.isFrozen(v.a.b[0]), mineFrozen: Object.isFrozen(mine) };`,
    { tools: { get: () => ({ a: { b: [{ c: 1 }] } }) } },
  );
  expect(resultOf(outcome)).toEqual({ deep: true, mineFrozen: false });
});
