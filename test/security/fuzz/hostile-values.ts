/**
 * fast-check arbitraries of hostile values: everything fc.anything makes
 * (bigint, Map, Set, Date, typed arrays, sparse arrays, null prototypes,
 * boxed values, -0, NaN), plus what it does not: getters that throw,
 * proxies with throwing, lying or revoked traps, cycles, symbol keys, class
 * instances, non-enumerable keys.
 *
 * The hostile parts are generated as recipes and built inside the property
 * (`hostile.build()`): fast-check itself probes and prints generated values,
 * and a revoked proxy would break the runner rather than the code under test.
 */
import fc from 'fast-check';

class Point {
  x = 1;
}

const LEAVES = {
  throwingGetter: () => Object.defineProperty({}, 'boom', { get: () => { throw new Error('getter'); }, enumerable: true }),
  throwingOwnKeys: () => new Proxy({ a: 1 }, { ownKeys: () => { throw new Error('trap'); } }),
  throwingGet: () => new Proxy({ a: 1 }, { get: () => { throw new Error('trap'); } }),
  throwingProto: () => new Proxy({ a: 1 }, { getPrototypeOf: () => { throw new Error('trap'); } }),
  throwingDescriptor: () => new Proxy({ a: 1 }, { getOwnPropertyDescriptor: () => { throw new Error('trap'); } }),
  lyingProxy: () => new Proxy({}, { ownKeys: () => ['a', 'b'], getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }) }),
  arrayProxy: () => new Proxy([1, 2], {}),
  revoked: () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  },
  cycle: () => {
    const a: Record<string, unknown> = { b: [] };
    (a.b as unknown[]).push(a);
    return a;
  },
  symbolKeyed: () => ({ [Symbol('s')]: 1, a: 1 }),
  nonEnumerable: () => Object.defineProperty({ a: 1 }, 'hidden', { value: 2, enumerable: false }),
  arrayExtra: () => Object.assign([1, 2], { extra: true }),
  sparse: () => [1, , 3],
  toJson: () => ({ toJSON: () => 'x' }),
  classInstance: () => new Point(),
  undefinedValue: () => undefined,
  negativeZero: () => -0,
  nan: () => NaN,
  infinity: () => Infinity,
  bigint: () => 1n,
  symbol: () => Symbol('x'),
  fn: () => () => 1,
  date: () => new Date(0),
  error: () => new Error('e'),
  typed: () => new Uint8Array(2),
  nullProto: () => Object.assign(Object.create(null) as object, { a: 1 }),
  deep: () => {
    const root: Record<string, unknown> = {};
    let node = root;
    for (let i = 0; i < 2_000; i++) node = (node.d = {}) as Record<string, unknown>;
    return root;
  },
} as const;

type Recipe = { leaf: keyof typeof LEAVES } | { json: unknown } | { array: Recipe[] } | { object: [string, Recipe][] };

const recipe: fc.Arbitrary<Recipe> = fc.letrec<{ node: Recipe }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 2 }).map((json) => ({ json })),
    fc.constantFrom(...(Object.keys(LEAVES) as (keyof typeof LEAVES)[])).map((leaf) => ({ leaf })),
    fc.array(tie('node'), { maxLength: 4 }).map((array) => ({ array })),
    fc.array(fc.tuple(fc.string({ maxLength: 6 }), tie('node')), { maxLength: 4 }).map((object) => ({ object })),
  ),
})).node;

function build(r: Recipe): unknown {
  if ('leaf' in r) return LEAVES[r.leaf]();
  if ('json' in r) return r.json;
  if ('array' in r) return r.array.map(build);
  const out: Record<string, unknown> = {};
  for (const [key, value] of r.object) Object.defineProperty(out, key, { value: build(value), enumerable: true, writable: true, configurable: true });
  return out;
}

export interface Hostile {
  build(): unknown;
  toString(): string;
}

/** fc.anything with every kind of value JSON cannot carry switched on. */
export function anythingLossy(maxDepth?: number): fc.Arbitrary<unknown> {
  return fc.anything({
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withObjectString: true,
    withSparseArray: true,
    withTypedArray: true,
    ...(maxDepth === undefined ? {} : { maxDepth }),
  });
}

/** A recipe for a mostly-JSON tree with hostile values planted anywhere, or anything fc.anything makes. */
export const hostile: fc.Arbitrary<Hostile> = fc.oneof(
  recipe.map((r) => ({ build: () => build(r), toString: () => JSON.stringify(r) })),
  anythingLossy(3).map((value) => ({ build: () => value, toString: () => fc.stringify(value) })),
);
