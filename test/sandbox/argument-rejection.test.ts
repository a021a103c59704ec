import { afterAll, beforeEach, expect, it } from 'vitest';
import { createFakeHost, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());
beforeEach(() => {
  host.calls.length = 0;
});

it.each([
  ['undefined', 'tools.echo(undefined as any)', /takes one JSON object/],
  ['no argument', '(tools.echo as any)()', /takes one JSON object/],
  ['an array', 'tools.echo([] as any)', /got an array/],
  ['an undefined key', 'tools.echo({ a: undefined })', /args\.a is undefined/],
  ['NaN', 'tools.echo({ n: NaN })', /args\.n is NaN/],
  ['a bigint', 'tools.echo({ b: 10n } as any)', /args\.b is a bigint/],
  ['a cycle', '(() => { const o: any = {}; o.self = o; return tools.echo(o); })()', /args\.self is a cycle/],
  ['a Date', 'tools.echo({ when: new Date() } as any)', /args\.when is a Date/],
  ['a getter that throws', 'tools.echo({ get x() { throw new Error("no"); } })', /could not be read/],
  ['a sparse array', 'tools.echo({ list: [1, , 3] })', /sparse array/],
  ['-0', 'tools.echo({ z: -0 })', /-0/],
])('%s is rejected inside the isolate with INVALID_ARGS and nothing is dispatched', async (_label, call, message) => {
  const outcome = await host.run(
    `try { await ${call}; return 'dispatched'; } catch (e) { return { isToolCallError: e instanceof ToolCallError, code: (e as ToolCallError).code, message: (e as Error).message }; }`,
    { tools: { echo: (args) => args } },
  );
  const result = resultOf(outcome) as { isToolCallError: boolean; code: string; message: string };
  expect(result.isToolCallError).toBe(true);
  expect(result.code).toBe('INVALID_ARGS');
  expect(result.message).toMatch(message);
  expect(result.message).toMatch(/pass an object such as \{\}/);
  expect(host.calls).toEqual([]);
});

it.each([
  ['a non-enumerable key', 'tools.echo(Object.defineProperty({ a: 1 }, "hidden", { value: 2 }))', /args has a non-enumerable key "hidden"/],
  ['a symbol key', 'tools.echo({ a: 1, [Symbol("s")]: 2 } as any)', /args has a symbol key s:/],
  ['a class instance', 'tools.echo(new (class Point { x = 1 })())', /args is an instance of Point, not a plain object/],
  ['a nested cycle back to the arguments', '(() => { const o: any = { inner: {} }; o.inner.back = o; return tools.echo(o); })()', /args\.inner\.back is a cycle/],
  ['a nested getter that throws', 'tools.echo({ inner: { get x() { throw new Error("no"); } } })', /args\.inner\.x could not be read/],
  ['Infinity under an odd key', 'tools.echo({ "odd key": Infinity })', /args\["odd key"\] is Infinity/],
])('%s is rejected with the path of the offending key', async (_label, call, message) => {
  const outcome = await host.run(`try { await ${call}; return 'dispatched'; } catch (e) { return (e as Error).message; }`, { tools: { echo: (args) => args } });
  expect(resultOf(outcome)).toMatch(message);
  expect(host.calls).toEqual([]);
});

it('accepted arguments reach the tool as JSON carries them (escaped keys, an own __proto__ key, numbers, nesting), even with a toJSON on Object.prototype', async () => {
  const outcome = await host.run(
    `Object.prototype.toJSON = () => 'polluted';
     const args = JSON.parse('{"__proto__": {"x": 1}}');
     Object.assign(args, { 'quote"d': 'line\\nbreak', big: 1e21, small: 5e-7, neg: -12.5, t: true, f: false, n: null, list: [1, 'two', [3]], deep: { a: { b: [] } } });
     await tools.echo(args);
     return [1, [2, { three: [] }]];`,
    { tools: { echo: (args) => args } },
  );
  // The same holds for the program's own result.
  expect(resultOf(outcome)).toEqual([1, [2, { three: [] }]]);
  expect(host.calls).toHaveLength(1);
  const expected = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
  Object.assign(expected, { 'quote"d': 'line\nbreak', big: 1e21, small: 5e-7, neg: -12.5, t: true, f: false, n: null, list: [1, 'two', [3]], deep: { a: { b: [] } } });
  expect(host.calls[0].args).toEqual(expected);
  expect(Object.keys(host.calls[0].args as object)).toEqual(Object.keys(expected));
});

it('a getter is read once: what is checked is what is sent', async () => {
  const outcome = await host.run(
    `let reads = 0;
     const args = { get n() { reads++; return reads === 1 ? 1 : undefined; } };
     const echoed = await tools.echo(args);
     return { echoed, reads };`,
    { tools: { echo: (args) => args } },
  );
  expect(resultOf(outcome)).toEqual({ echoed: { n: 1 }, reads: 1 });
});

it('an argument with more characters of JSON than maxArgBytes is rejected inside the isolate with INVALID_ARGS, nothing submitted', async () => {
  const outcome = await host.run(
    `let refused;
     try { await tools.echo({ data: 'x'.repeat(1_000) }); } catch (e) { refused = { isToolCallError: e instanceof ToolCallError, code: (e as ToolCallError).code, callId: (e as ToolCallError).callId, message: (e as Error).message }; }
     const fits = await tools.echo({ data: 'x'.repeat(900) });
     return { refused, fits: fits.data.length };`,
    { tools: { echo: (args) => args }, limits: { maxArgBytes: 1_000 } },
  );
  expect(resultOf(outcome)).toEqual({
    refused: {
      isToolCallError: true,
      code: 'INVALID_ARGS',
      callId: '',
      // The sentence is pinned in test/code-mode/limits.test.ts.
      message: expect.stringMatching(/^tool arguments are 1011 characters of JSON, over the 1000-byte limit/),
    },
    fits: 900,
  });
  expect(host.calls).toHaveLength(1);
});
