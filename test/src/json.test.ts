import vm from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deepFreeze, isLosslessJson, LossyJsonError, snapshotFrozenJson, snapshotJson } from '../../src/json.ts';

/** The LossyJsonError snapshotJson throws for `input` (fails the test if none). */
function lossy(input: unknown, root?: string): LossyJsonError {
  try {
    snapshotJson(input, root);
  } catch (error) {
    expect(error).toBeInstanceOf(LossyJsonError);
    return error as LossyJsonError;
  }
  throw new Error('expected a LossyJsonError');
}

function deepArray(depth: number, leaf: unknown = 0): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** A lossy value of each kind, where snapshotJson finds it and what it says. */
function lossyCases(): [string, unknown, string, RegExp][] {
  const sparse = [1, , 3];
  const extraKey = Object.assign([1, 2], { extra: true });
  const cyclic: { a: { b?: unknown } } = { a: {} };
  cyclic.a.b = cyclic;
  const cyclicArray: unknown[] = [];
  cyclicArray.push([cyclicArray]);
  class Point {
    x = 1;
  }
  const nonEnumerable = { visible: 1 };
  Object.defineProperty(nonEnumerable, 'hidden', { value: 2, enumerable: false });
  const throwingGetter = {
    get boom(): never {
      throw new TypeError('getter exploded');
    },
  };
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  const throwingKeys = new Proxy({}, { ownKeys: () => { throw new Error('no keys'); } });
  // Long arrays (300 elements) have their keys checked another way than short ones (json.ts, hasElementsOnly).
  const long = (): number[] => Array.from({ length: 300 }, (_, i) => i);
  const longSparse = long();
  delete longSparse[150];
  const longExtraKey = Object.assign(long(), { extra: true });
  const longHidden = long();
  Object.defineProperty(longHidden, 'hidden', { value: 2, enumerable: false });
  const longSymbol = long();
  Object.defineProperty(longSymbol, Symbol('t'), { value: 2, enumerable: false });
  const longGetter = long();
  Object.defineProperty(longGetter, 'lazy', { get: () => 2, enumerable: false });

  const cases: [string, unknown, string, RegExp][] = [
    ['undefined at the root', undefined, 'value', /undefined/],
    ['undefined in an object', { a: 1, b: undefined }, 'value.b', /undefined/],
    ['undefined in an array', [1, undefined], 'value[1]', /undefined/],
    ['bigint', { n: 1n }, 'value.n', /bigint/],
    ['function', { f: () => 1 }, 'value.f', /function/],
    ['symbol', [Symbol('s')], 'value[0]', /symbol/],
    ['NaN', { x: NaN }, 'value.x', /NaN/],
    ['Infinity', { x: Infinity }, 'value.x', /Infinity/],
    ['-Infinity', { x: -Infinity }, 'value.x', /-Infinity/],
    ['-0', { x: [0, -0] }, 'value.x[1]', /-0/],
    ['sparse array', { list: sparse }, 'value.list', /sparse|hole/],
    ['array with an extra key', { list: extraKey }, 'value.list', /extra key "extra"/],
    ['cycle through objects', cyclic, 'value.a.b', /cycle/],
    ['cycle through arrays', cyclicArray, 'value[0][0]', /cycle/],
    ['Date', { at: new Date(0) }, 'value.at', /Date/],
    ['class instance', { p: new Point() }, 'value.p', /Point/],
    ['Map', { m: new Map() }, 'value.m', /Map/],
    ['Set', [new Set()], 'value[0]', /Set/],
    ['symbol key', { o: { [Symbol('k')]: 1 } }, 'value.o', /symbol key/],
    ['non-enumerable key', { o: nonEnumerable }, 'value.o', /non-enumerable key "hidden"/],
    ['boxed string', { s: new String('x') }, 'value.s', /String/],
    // Hostile reads: what throws is named as unreadable, never rethrown.
    ['throwing getter', { deep: [throwingGetter] }, 'value.deep[0].boom', /could not be read/],
    ['revoked proxy', { p: revoked }, 'value.p', /could not be read/],
    ['throwing ownKeys trap', [throwingKeys], 'value[0]', /could not be read/],
    ['long sparse array', { list: longSparse }, 'value.list', /sparse|hole/],
    ['long array with an extra key', { list: longExtraKey }, 'value.list', /extra key "extra"/],
    ['long array with a non-enumerable key', { list: longHidden }, 'value.list', /extra key "hidden"/],
    ['long array with a symbol key', { list: longSymbol }, 'value.list', /symbol key t/],
    ['long array with a getter key', { list: longGetter }, 'value.list', /extra key "lazy"/],
  ];
  return cases;
}

describe('snapshotJson rejects each lossy kind with its path', () => {
  for (const [name, input, path, message] of lossyCases()) {
    it(name, () => {
      const error = lossy(input);
      expect(error.violation.path).toBe(path);
      expect(error.violation.message).toMatch(message);
      expect(error.message).toBe(`${path}: ${error.violation.message}`);
      expect(isLosslessJson(input)).toBe(false);
    });
  }

  it('names the root as asked and quotes keys that are not identifiers', () => {
    expect(lossy({ 'a b': { c: [undefined] } }, 'arguments').violation.path).toBe('arguments["a b"].c[0]');
  });

  it('reports a throwing getter as a LossyJsonError at its path, never the getter error', () => {
    const hostile = {
      get boom(): never {
        throw new TypeError('getter exploded');
      },
    };
    const error = lossy({ deep: [hostile] });
    expect(error.violation.path).toBe('value.deep[0].boom');
    expect(error.message).not.toContain('getter exploded');
    expect(isLosslessJson({ deep: [hostile] })).toBe(false);
  });

  it('refuses a proxy that lists more keys to the copy than to the checks, in every snapshot', () => {
    // The checks ask for the keys twice; the copy asks a third time and would get a function in.
    const lying = (): object => {
      let asked = 0;
      const target: Record<string, unknown> = { a: 1, code: () => 'run me' };
      return new Proxy(target, { ownKeys: () => (++asked <= 2 ? ['a'] : ['a', 'code']) });
    };
    expect(lossy({ x: lying() }).violation).toEqual({ path: 'value.x', message: 'has keys that changed while being read' });
    expect(() => snapshotFrozenJson({ x: lying() })).toThrow(LossyJsonError);
  });

  it('still copies plain objects when Object.prototype has an enumerable key', () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = 1;
    try {
      const copy = snapshotJson({ a: { b: 2 } });
      expect(copy).toEqual({ a: { b: 2 } });
      expect(Object.keys((copy as { a: object }).a)).toEqual(['b']);
    } finally {
      delete proto.polluted;
    }
  });

  it('rejects an Array subclass and a typed array', () => {
    class List extends Array<number> {}
    expect(lossy({ l: List.from([1]) }).violation.path).toBe('value.l');
    expect(lossy(new Uint8Array(2)).violation.message).toMatch(/Uint8Array/);
  });
});

describe('snapshotJson reads and checks each value once', () => {
  it('reads each getter once and snapshots what it returned', () => {
    let reads = 0;
    const input = {
      a: 1,
      get counted(): { n: number } {
        reads++;
        return { n: reads };
      },
    };
    const frozen = snapshotFrozenJson(input) as { counted: { n: number } };
    expect(reads).toBe(1);
    expect(frozen).toStrictEqual({ a: 1, counted: { n: 1 } });
    expect(Object.isFrozen(frozen.counted)).toBe(true);
  });

  it('checks what a getter returned, at its key', () => {
    const input = { ok: 1, get bad(): unknown { return undefined; } };
    expect(lossy({ x: input }).violation.path).toBe('value.x.bad');
  });

  it('rejects a symbol key a getter deletes while the object is read', () => {
    const key = Symbol('gone');
    const input: Record<string | symbol, unknown> = {
      get first(): number {
        delete input[key];
        return 1;
      },
      [key]: 2,
    };
    expect(lossy({ o: input }).violation.message).toMatch(/symbol key gone/);
  });

  it('rejects non-enumerable symbol keys and array keys of every kind', () => {
    const hidden = { a: 1 };
    Object.defineProperty(hidden, Symbol('s'), { value: 1, enumerable: false });
    expect(lossy({ o: hidden }).violation.message).toMatch(/symbol key s/);
    const symbolArray = Object.assign([1, 2], { [Symbol('t')]: 1 });
    expect(lossy({ l: symbolArray }).violation.message).toMatch(/symbol key t/);
    const hiddenArray = [1, 2];
    Object.defineProperty(hiddenArray, 'x', { value: 1, enumerable: false });
    expect(lossy({ l: hiddenArray }).violation.message).toMatch(/extra key "x"/);
  });

  it('finds a cycle through objects deeper than the ancestor scan', () => {
    const top: Record<string, unknown> = {};
    let node = top;
    for (let i = 0; i < 100; i++) {
      const next: Record<string, unknown> = {};
      node.n = next;
      node = next;
    }
    node.back = top;
    expect(lossy(top).violation.path).toBe(`value${'.n'.repeat(100)}.back`);
  });

  it('finds a cycle through an object whose values were copied first', () => {
    const a: Record<string, unknown> = { n: 1 };
    const b: Record<string, unknown> = { back: a };
    a.b = b;
    expect(lossy([a]).violation.path).toBe('value[0].b.back');
    const shared = { n: 1 };
    expect(snapshotFrozenJson({ x: shared, y: [shared] })).toStrictEqual({ x: { n: 1 }, y: [{ n: 1 }] });
  });
});

describe('snapshotJson accepts', () => {
  it('null-prototype objects', () => {
    const bare = Object.assign(Object.create(null) as object, { a: 1, b: [true, null] });
    expect(snapshotJson(bare)).toEqual({ a: 1, b: [true, null] });
    expect(isLosslessJson(bare)).toBe(true);
  });

  it('objects and arrays from another realm (node:vm)', () => {
    const foreign: unknown = vm.runInNewContext('({ a: [1, { b: "x" }], c: Object.create(null) })');
    expect(foreign).not.toBeInstanceOf(Object);
    expect(snapshotJson(foreign)).toEqual({ a: [1, { b: 'x' }], c: {} });
    expect(isLosslessJson(foreign)).toBe(true);
  });

  it('but not class instances or Dates from another realm', () => {
    expect(isLosslessJson(vm.runInNewContext('new Date(0)'))).toBe(false);
    expect(isLosslessJson(vm.runInNewContext('new (class K { constructor() { this.a = 1 } })()'))).toBe(false);
    expect(isLosslessJson(vm.runInNewContext('new Map()'))).toBe(false);
  });

  it('copies shared non-cyclic references at each place they occur', () => {
    const shared = { n: 1 };
    const input = { a: shared, b: shared, list: [shared, shared] };
    const copy = snapshotJson(input) as { a: object; b: object; list: object[] };
    expect(copy).toEqual({ a: { n: 1 }, b: { n: 1 }, list: [{ n: 1 }, { n: 1 }] });
    expect(copy.a).not.toBe(shared);
    expect(copy.a).not.toBe(copy.b);
    expect(copy.list[0]).not.toBe(copy.list[1]);
  });

  it('ignores toJSON: the data is what counts', () => {
    expect(lossy({ toJSON: () => 'x' }).violation.path).toBe('value.toJSON');
    const withData = { kind: 'plain' };
    expect(snapshotJson(withData)).toEqual({ kind: 'plain' });
  });

  it('returns a detached copy: later changes on either side do not cross', () => {
    const input = { list: [1, 2], nested: { a: 'x' } };
    const copy = snapshotJson(input) as typeof input;
    expect(copy).not.toBe(input);
    expect(copy.list).not.toBe(input.list);
    input.list.push(3);
    input.nested.a = 'changed';
    expect(copy).toEqual({ list: [1, 2], nested: { a: 'x' } });
    copy.list.push(9);
    expect(input.list).toEqual([1, 2, 3]);
  });

  it('keeps a key named __proto__ as an own property of a plain object', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object;
    const copy = snapshotJson(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect(copy.polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });

  it('keeps key order, including integer-like keys', () => {
    const input = { b: 1, 2: 'two', a: 2, 1: 'one' };
    expect(JSON.stringify(snapshotJson(input))).toBe(JSON.stringify(input));
  });

  it('returns scalars as they are', () => {
    for (const value of [null, true, false, 0, 1.5, -3, '', 'text']) expect(snapshotJson(value)).toBe(value);
  });

  it('handles a 100,000-deep array without a stack overflow (snapshot, check and freeze)', () => {
    const deep = deepArray(100_000, 'leaf');
    const copy = snapshotJson(deep);
    expect(isLosslessJson(deep)).toBe(true);
    const frozen = deepFreeze(copy);
    let node: unknown = frozen;
    let depth = 0;
    let frozenLevels = 0;
    while (Array.isArray(node)) {
      if (Object.isFrozen(node)) frozenLevels++;
      node = node[0];
      depth++;
    }
    expect(depth).toBe(100_000);
    expect(frozenLevels).toBe(100_000);
    expect(node).toBe('leaf');
  });

  it('finds a cycle 50,000 levels down and names its path', () => {
    const top: unknown[] = [];
    let node = top;
    for (let i = 0; i < 50_000; i++) {
      const next: unknown[] = [];
      node.push(next);
      node = next;
    }
    node.push(top);
    const error = lossy(top);
    expect(error.violation.message).toMatch(/cycle/);
    expect(error.violation.path).toBe(`value${'[0]'.repeat(50_001)}`);
    expect(isLosslessJson(top)).toBe(false);
  });

  // Deep values with objects, siblings after a deep branch, and faults down there.
  function deepObject(depth: number, leaf: unknown): Record<string, unknown> {
    let value: unknown = leaf;
    for (let i = 0; i < depth; i++) value = { before: i, 'odd key': [i], next: value, after: true };
    return value as Record<string, unknown>;
  }

  it('copies deep objects with siblings after the deep branch, as JSON does, frozen or not', () => {
    const input = { rows: [deepObject(300, 'end'), deepObject(5, null)], tail: deepObject(140, [1, { x: 'y' }]) };
    for (const copy of [snapshotJson(input), snapshotFrozenJson(input)]) {
      expect(JSON.stringify(copy)).toBe(JSON.stringify(input));
    }
    let node: unknown = snapshotFrozenJson(input);
    let levels = 0;
    for (node = (node as { rows: unknown[] }).rows[0]; typeof node === 'object' && node !== null; node = (node as { next: unknown }).next) {
      expect(Object.isFrozen(node)).toBe(true);
      levels++;
    }
    expect(levels).toBe(300);
  });

  it('names the first fault in key order however deep it is, with its path', () => {
    const atBottom = deepObject(200, undefined);
    expect(lossy({ v: atBottom }).violation.path).toBe(`value.v${'.next'.repeat(200)}`);
    // The deep branch comes first in key order, so its fault is named before the later key's.
    const both = { deep: deepObject(150, 1n), later: NaN };
    expect(lossy(both).violation).toEqual({ path: `value.deep${'.next'.repeat(150)}`, message: 'is a bigint: use a number or a string' });
    // A key the object hides comes before any of its members' faults, deep ones included.
    const hidden = deepObject(100, Symbol('s'));
    let inner = hidden;
    for (let i = 0; i < 70; i++) inner = inner.next as Record<string, unknown>;
    Object.defineProperty(inner, 'secret', { value: 1, enumerable: false });
    expect(lossy(hidden).violation).toEqual({ path: `value${'.next'.repeat(70)}`, message: 'has a non-enumerable key "secret", which JSON drops: make it enumerable or remove it' });
  });

  it('keeps its own state when a getter snapshots another value meanwhile', () => {
    const other = { inner: deepObject(100, 'x') };
    let seen: unknown;
    const input = {
      first: deepObject(80, 1),
      get reentrant(): number {
        seen = snapshotFrozenJson(other);
        expect(() => snapshotJson({ bad: [1n] })).toThrow('value.bad[0]: is a bigint');
        return 2;
      },
      last: deepObject(90, [true]),
    };
    const copy = snapshotFrozenJson(input);
    expect(JSON.stringify(copy)).toBe(JSON.stringify({ first: input.first, reentrant: 2, last: input.last }));
    expect(JSON.stringify(seen)).toBe(JSON.stringify(other));
    expect(lossy({ a: input, b: -0 }).violation.path).toBe('value.b');
  });

  it('finds a cycle back to an ancestor well above it, and takes a shared value twice', () => {
    const top = deepObject(200, null);
    let node = top;
    for (let i = 0; i < 150; i++) node = node.next as Record<string, unknown>;
    let back = top;
    for (let i = 0; i < 10; i++) back = back.next as Record<string, unknown>;
    node.next = back;
    expect(lossy(top).violation).toEqual({ path: `value${'.next'.repeat(151)}`, message: 'is a cycle: it contains itself' });
    // The same value twice, side by side, is no cycle.
    const shared = deepObject(100, 0);
    expect(JSON.stringify(snapshotJson({ a: shared, b: shared }))).toBe(JSON.stringify({ a: shared, b: shared }));
  });
});

describe('deepFreeze', () => {
  it('freezes every object and array reachable, and returns its argument', () => {
    const value = { a: [{ b: 1 }], c: { d: [] as unknown[] } };
    const frozen = deepFreeze(value);
    expect(frozen).toBe(value);
    for (const node of [value, value.a, value.a[0], value.c, value.c.d]) expect(Object.isFrozen(node)).toBe(true);
    expect(() => {
      'use strict';
      (value.c.d as unknown[]).push(1);
    }).toThrow(TypeError);
  });

  it('terminates on cycles and passes scalars through', () => {
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    expect(deepFreeze(cyclic)).toBe(cyclic);
    expect(Object.isFrozen(cyclic)).toBe(true);
    expect(deepFreeze(5)).toBe(5);
    expect(deepFreeze(null)).toBe(null);
  });
});

describe('snapshotFrozenJson', () => {
  it('is a deep-frozen snapshot in one pass', () => {
    const input = { a: [{ b: 1 }, [2]], c: 'x' };
    const frozen = snapshotFrozenJson(input) as { a: [{ b: number }, number[]] };
    expect(frozen).toStrictEqual(input);
    expect(frozen).not.toBe(input);
    for (const node of [frozen, frozen.a, frozen.a[0], frozen.a[1]]) expect(Object.isFrozen(node)).toBe(true);
    expect(Object.isFrozen(input)).toBe(false);
  });

  it('throws the same LossyJsonError as snapshotJson', () => {
    expect(() => snapshotFrozenJson({ a: [1, undefined] }, 'arguments')).toThrow('arguments.a[1]: is undefined');
  });
});

describe('the frozen snapshots take plain values by a quicker copy and leave the rest to the walker', () => {
  const frozenSnapshots = { snapshotFrozenJson };

  /** Every object and array reachable from `value` is frozen. */
  function deepFrozen(value: unknown): boolean {
    if (typeof value !== 'object' || value === null) return true;
    return Object.isFrozen(value) && Object.values(value).every(deepFrozen);
  }

  for (const [snapshotName, snapshot] of Object.entries(frozenSnapshots)) {
    it(`${snapshotName} refuses each lossy kind with the error snapshotJson gives`, () => {
      for (const [, input] of lossyCases()) {
        const expected = lossy(input).violation;
        // Inside an array of plain rows too: the quick copy gets that far before it gives up.
        for (const wrapped of [input, [{ a: [1] }, { b: input }]]) {
          let thrown: unknown;
          try {
            snapshot(wrapped);
          } catch (error) {
            thrown = error;
          }
          expect(thrown).toBeInstanceOf(LossyJsonError);
          expect((thrown as LossyJsonError).violation).toEqual(wrapped === input ? expected : lossy(wrapped).violation);
        }
      }
    });

    it(`${snapshotName} copies what the quick copy leaves to the walker: deep nesting, another realm, a __proto__ key, a polluted Object.prototype`, () => {
      const deep = { rows: [deepArray(200, { leaf: [1] }), { a: deepArray(70) }] };
      const foreign: unknown = vm.runInNewContext('({ a: [1, { b: "x" }], c: Object.create(null) })');
      const protoKey = JSON.parse('{"__proto__": {"polluted": true}, "list": [{"__proto__": [1]}]}') as unknown;
      for (const input of [deep, foreign, protoKey]) {
        const copy = snapshot(input);
        expect(copy).toStrictEqual(snapshotJson(input));
        expect(JSON.stringify(copy)).toBe(JSON.stringify(input));
        expect(deepFrozen(copy)).toBe(true);
      }
      expect(Object.getPrototypeOf(snapshot(protoKey))).toBe(Object.prototype);
      const proto = Object.prototype as Record<string, unknown>;
      proto.polluted = 1;
      try {
        const copy = snapshot({ a: { b: [2] } }) as { a: object };
        expect(Object.keys(copy.a)).toEqual(['b']);
        expect(deepFrozen(copy)).toBe(true);
      } finally {
        delete proto.polluted;
      }
    });

    it(`${snapshotName} leaves a cycle to the walker within a round of it past a few levels, not at its depth limit`, () => {
      let reads = 0;
      const row: Record<string, unknown> = {
        get counted(): number {
          reads++;
          return 1;
        },
      };
      const rows = [row, { b: 2 }];
      row.back = rows;
      expect(() => snapshot({ rows })).toThrow('value.rows[0].back: is a cycle: it contains itself');
      // The quick copy reads it at depths 2 and 4 (it remembers objects from depth 4 on), then the
      // walker once: not once per round of the cycle down to the copy's depth limit of 64.
      expect(reads).toBe(3);
    });

    it(`${snapshotName} agrees with snapshotJson on generated values`, () => {
      fc.assert(
        fc.property(fc.anything({ withBigInt: true, withDate: true, withMap: true, withNullPrototype: true, withSparseArray: true, withBoxedValues: true }), (value) => {
          let expected: unknown;
          try {
            expected = snapshotJson(value);
          } catch (error) {
            expect(() => snapshot(value)).toThrow((error as LossyJsonError).message);
            return;
          }
          const copy = snapshot(value);
          expect(copy).toStrictEqual(expected);
          expect(deepFrozen(copy)).toBe(true);
        }),
        { numRuns: 300, seed: 0x5eed },
      );
    });
  }
});

describe('properties (fast-check)', () => {
  // -0 does not survive JSON (it becomes 0), so the generator maps it to 0.
  const json = fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown);

  it('snapshotJson(x) deep-equals JSON.parse(JSON.stringify(x)) for generated JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (raw) => {
        const value = Object.is(raw, -0) ? 0 : raw;
        const input = JSON.parse(JSON.stringify(value)) as unknown;
        const copy = snapshotJson(input);
        expect(copy).toStrictEqual(JSON.parse(JSON.stringify(input)));
        expect(JSON.stringify(copy)).toBe(JSON.stringify(input));
        expect(isLosslessJson(input)).toBe(true);
      }),
      { numRuns: 300, seed: 0x5eed },
    );
  });

  it('isLosslessJson agrees with snapshotJson', () => {
    fc.assert(
      fc.property(fc.oneof(json, fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withNullPrototype: true, withSparseArray: true, withTypedArray: true, withBoxedValues: true, withObjectString: true })), (value) => {
        let threw = false;
        try {
          snapshotJson(value);
        } catch (error) {
          expect(error).toBeInstanceOf(LossyJsonError);
          threw = true;
        }
        expect(isLosslessJson(value)).toBe(!threw);
      }),
      { numRuns: 500, seed: 0x5eed },
    );
  });
});
