import { afterAll, expect, it } from 'vitest';
import { createFakeHost, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('tools is frozen and null-prototype, keyed by exact names, including __proto__ and dashed names', async () => {
  const outcome = await host.run(
    `const a = await tools["__proto__"]({});
     const b = await tools["my-tool"]({ q: 1 });
     return {
       a, b,
       proto: Object.getPrototypeOf(tools),
       frozen: Object.isFrozen(tools),
       keys: Object.keys(tools),
       hasToString: "toString" in tools,
     };`,
    { tools: { ['__proto__']: () => 'proto tool', 'my-tool': (args: unknown) => args } },
  );
  expect(resultOf(outcome)).toEqual({ a: 'proto tool', b: { q: 1 }, proto: null, frozen: true, keys: ['__proto__', 'my-tool'], hasToString: false });
  expect(host.calls.map((call) => call.name)).toEqual(['__proto__', 'my-tool']);
});
