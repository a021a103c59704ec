import { afterAll, expect, it } from 'vitest';
import { createFakeHost, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('no isolated-vm object is reachable by walking globalThis (properties, prototypes, getters)', async () => {
  const outcome = await host.run(
    `const IVM_METHODS = ['derefInto', 'applySync', 'applySyncPromise', 'copySync', 'applyIgnored', 'compileScript', 'createContext', 'evalClosure'];
     const seen = new Set<unknown>();
     const found: string[] = [];
     const queue: [unknown, string][] = [[globalThis, 'globalThis']];
     while (queue.length > 0) {
       const [value, path] = queue.shift()!;
       if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) continue;
       seen.add(value);
       let keys: (string | symbol)[] = [];
       try { keys = Reflect.ownKeys(value); } catch { continue; }
       for (const key of keys) {
         if (typeof key === 'string' && IVM_METHODS.includes(key)) found.push(path + '.' + key);
         const descriptor = Reflect.getOwnPropertyDescriptor(value, key)!;
         for (const child of [descriptor.value, descriptor.get, descriptor.set]) queue.push([child, path + '.' + String(key)]);
         if (descriptor.get) { try { queue.push([descriptor.get.call(value), path + '.' + String(key) + '()']); } catch {} }
       }
       queue.push([Object.getPrototypeOf(value), path + '.__proto__']);
     }
     return { found, walked: seen.size > 500, names: ['ivm', 'isolated_vm', '_ivm'].filter((n) => n in globalThis) };`,
    { tools: { one: () => 1 } },
  );
  expect(resultOf(outcome)).toEqual({ found: [], walked: true, names: [] });
});

it('WebAssembly is not offered', async () => {
  expect(resultOf(await host.run('return typeof (globalThis as any).WebAssembly'))).toBe('undefined');
});

it('no require, process or fetch', async () => {
  expect(resultOf(await host.run('return [typeof (globalThis as any).require, typeof (globalThis as any).process, typeof (globalThis as any).fetch]'))).toEqual([
    'undefined',
    'undefined',
    'undefined',
  ]);
});

it('stack-trace hooks see no bootstrap functions', async () => {
  const outcome = await host.run(
    `let leaked: unknown[] = [];
     (Error as any).prepareStackTrace = (_e: unknown, sites: any[]) => { leaked.push(...sites.map((s) => s.getFunction?.()).filter(Boolean)); return ''; };
     try { await tools.fail({}); } catch {}
     try { await tools.one({ a: undefined }); } catch (e) { String((e as Error).stack); }
     (Error as any).prepareStackTrace = undefined;
     return leaked.map((f: any) => String(f).slice(0, 40));`,
    { tools: { one: () => 1, fail: () => { throw new Error('x'); } } },
  );
  expect(resultOf(outcome)).toEqual([]);
});
