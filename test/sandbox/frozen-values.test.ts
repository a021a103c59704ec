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
