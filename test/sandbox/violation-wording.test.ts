/**
 * The guest's own checks and the host's snapshot word a bad value alike: each value below is built
 * from the same source text inside the isolate (a program's result, a tool's arguments) and in the
 * host (snapshotJson), and the two must name the same path with the same message.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { LossyJsonError, snapshotJson, type JsonViolation } from '../../src/json.ts';
import { JSON_VIOLATIONS } from '../../src/json-violations.ts';
import { createFakeHost, failureOf, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

const long = 'Array.from({ length: 300 }, (_, i) => i)';

/** Plain JavaScript that both sides evaluate; each makes an object with one thing wrong in it. */
const BAD_VALUES: [string, string][] = [
  ['undefined in an object', '{ a: 1, b: undefined }'],
  ['undefined in an array', '{ list: [1, undefined] }'],
  ['a bigint', '{ n: 1n }'],
  ['a function', '{ f: () => 1 }'],
  ['a symbol', '{ list: [Symbol("s")] }'],
  ['NaN', '{ x: NaN }'],
  ['-Infinity', '{ x: -Infinity }'],
  ['-0', '{ x: [0, -0] }'],
  ['a sparse array', '{ list: [1, , 3] }'],
  ['a long sparse array', `(() => { const a = ${long}; delete a[150]; return { list: a }; })()`],
  ['an array with an extra key', '{ list: Object.assign([1, 2], { extra: true }) }'],
  ['an array with a hidden key', '{ list: Object.defineProperty([1, 2], "x", { value: 1 }) }'],
  ['a long array with a hidden key', `{ list: Object.defineProperty(${long}, "hidden", { value: 2 }) }`],
  ['an array with a symbol key', '{ list: Object.assign([1, 2], { [Symbol("t")]: 1 }) }'],
  ['a cycle through objects', '(() => { const o = { a: {} }; o.a.b = o; return o; })()'],
  ['a cycle through arrays', '(() => { const a = []; a.push([a]); return { a }; })()'],
  ['a Date', '{ at: new Date(0) }'],
  ['a class instance', '{ p: new (class Point { constructor() { this.x = 1; } })() }'],
  ['a Map', '{ m: new Map() }'],
  ['a boxed string', '{ s: new String("x") }'],
  ['an Array subclass', '{ l: new (class List extends Array {})() }'],
  ['a symbol key', '{ o: { [Symbol("k")]: 1 } }'],
  ['a non-enumerable key', '{ o: Object.defineProperty({ visible: 1 }, "hidden", { value: 2 }) }'],
  ['a throwing getter', '{ deep: [{ ok: 1, get boom() { throw new Error("no"); } }] }'],
  ['a throwing getter after a nested value', '{ first: { a: [1, { b: 2 }] }, get boom() { throw new Error("no"); } }'],
  ['a revoked proxy', '(() => { const r = Proxy.revocable({}, {}); r.revoke(); return { p: r.proxy }; })()'],
  ['a throwing ownKeys trap', '{ list: [new Proxy({}, { ownKeys() { throw new Error("no"); } })] }'],
];

/** The violation the host's snapshot names for `source` evaluated at `root`. */
function hostViolation(source: string, root: string): JsonViolation {
  const value: unknown = new Function(`return (${source});`)();
  try {
    snapshotJson(value, root);
  } catch (error) {
    expect(error).toBeInstanceOf(LossyJsonError);
    return (error as LossyJsonError).violation;
  }
  throw new Error(`the host took ${source}`);
}

describe('a program result the guest refuses reads as the host words it', () => {
  it.each(BAD_VALUES)('%s', async (_label, source) => {
    const { path, message } = hostViolation(source, 'result');
    const failure = failureOf(await host.run(`return (${source});`));
    expect(failure.kind).toBe('invalid-output');
    expect(failure.message).toBe(`the returned value is not lossless JSON: ${path} ${message}`);
  });
});

describe('tool arguments the guest refuses read as the host words them', () => {
  it.each(BAD_VALUES)('%s', async (_label, source) => {
    const { path, message } = hostViolation(source, 'args');
    const outcome = await host.run(`try { await tools.echo(${source}); return 'dispatched'; } catch (e) { return e.message; }`, { tools: { echo: (args) => args } });
    expect(resultOf(outcome)).toBe(`tool arguments must be lossless JSON: ${path} ${message}; pass an object such as {}`);
  });
});

it('the words of nesting too deep come from the same table', async () => {
  const failure = failureOf(await host.run('let v = 0; for (let i = 0; i < 1_001; i++) v = [v]; return v;'));
  expect(failure.message).toContain(JSON_VIOLATIONS.tooDeep.replace('{}', '1000'));
});
