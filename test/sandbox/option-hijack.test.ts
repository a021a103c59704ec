import { afterAll, expect, it } from 'vitest';
import { createFakeHost, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('Object.prototype getters cannot turn a transferred value into a Reference', async () => {
  const outcome = await host.run(
    `const hijacked: string[] = [];
     for (const key of ['reference', 'copy', 'externalCopy', 'promise', 'result', 'arguments', 'release', 'timeout']) {
       Object.defineProperty(Object.prototype, key, {
         get() { hijacked.push(key); return key === 'result' || key === 'arguments' ? { reference: true } : true; },
         configurable: true,
       });
     }
     const value = await tools.get({});
     await new Promise((resolve) => setTimeout(resolve, 1));
     console.log('still logging');
     return { value, hijacked, kind: Object.prototype.toString.call(value), keys: Object.getOwnPropertyNames(value) };`,
    { tools: { get: () => ({ plain: true }) } },
  );
  expect(resultOf(outcome)).toEqual({ value: { plain: true }, hijacked: [], kind: '[object Object]', keys: ['plain'] });
  expect(outcome.logs).toEqual(['still logging']);
  expect(host.calls).toEqual([{ name: 'get', args: {} }]);
});

it('setters on Object.prototype cannot drop keys from the arguments a stub sends', async () => {
  const outcome = await host.run(
    `Object.defineProperty(Object.prototype, 'q', { set(_v) {}, get() { return undefined; }, configurable: true });
     return await tools.echo({ q: 1, __proto__: null, ['__proto__']: 2 } as any);`,
    { tools: { echo: (args) => args } },
  );
  expect(JSON.stringify(resultOf(outcome))).toBe('{"q":1,"__proto__":2}');
});
