/**
 * snapshotFrozenJsonInChunks (src/json.ts): a big array's copy handed out a slice of elements at a
 * time, with the same value, checks, error paths and single reads as the one-walk snapshot.
 */
import vm from 'node:vm';
import { describe, expect, it, vi } from 'vitest';
import { JSON_CHUNK_CHARS, JSON_CHUNK_ELEMENTS, JSON_FIRST_CHUNK_ELEMENTS, jsonTextOf, LossyJsonError, snapshotFrozenJson, snapshotFrozenJsonInChunks } from '../../src/json.ts';

const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i, tags: ['a', String(i)], nested: { ok: i % 2 === 0 } }));

function chunked(input: unknown): { value: unknown; chunks: number; texts: string[]; shapes: string[] } {
  const texts: string[] = [];
  const shapes: string[] = [];
  const { value, chunks } = snapshotFrozenJsonInChunks(input, 'value', (json, shape) => {
    texts.push(json);
    shapes.push(shape);
  });
  return { value, chunks, texts, shapes };
}

function lossy(input: unknown): { path: string; message: string } {
  try {
    chunked(input);
  } catch (error) {
    expect(error).toBeInstanceOf(LossyJsonError);
    return (error as LossyJsonError).violation;
  }
  throw new Error('no error');
}

function oneWalk(input: unknown): unknown {
  try {
    snapshotFrozenJson(input, 'value');
  } catch (error) {
    return (error as LossyJsonError).violation;
  }
  throw new Error('no error');
}

describe('snapshotFrozenJsonInChunks', () => {
  it('hands out a big array a slice at a time: the slices joined are the value, a detached deep-frozen copy', () => {
    const input = rows(2 * JSON_CHUNK_ELEMENTS + 500);
    const { value, chunks, texts } = chunked(input);
    // A small first slice (the consumer is idle until it comes), then full ones, then the rest.
    expect(chunks).toBe(4);
    expect(texts.map((text) => (JSON.parse(text) as unknown[]).length)).toEqual([
      JSON_FIRST_CHUNK_ELEMENTS,
      JSON_CHUNK_ELEMENTS,
      JSON_CHUNK_ELEMENTS,
      500 - JSON_FIRST_CHUNK_ELEMENTS,
    ]);
    expect(texts.flatMap((text) => JSON.parse(text) as unknown[])).toEqual(input);
    expect(value).toEqual(input);
    expect(value).not.toBe(input);
    const copy = value as typeof input;
    expect([Object.isFrozen(copy), Object.isFrozen(copy[2400]), Object.isFrozen(copy[2400].tags), Object.isFrozen(copy[2400].nested)]).toEqual([true, true, true, true]);
    // No whole text was made with it: one is made on demand, and it is right.
    expect(jsonTextOf(copy)).toBe(JSON.stringify(input));
  });

  it('sizes the slices after the first by their text: about JSON_CHUNK_CHARS characters, under V8\'s large-object size even as two-byte text', () => {
    // Rows of about 330 characters of text: 1,000 of them would make a 330,000-character slice.
    const wide = Array.from({ length: 3_000 }, (_, i) => ({ id: i, text: 'x'.repeat(300 + (i % 7)) }));
    const { value, texts } = chunked(wide);
    expect((JSON.parse(texts[0]) as unknown[]).length).toBe(JSON_FIRST_CHUNK_ELEMENTS);
    for (const text of texts.slice(1, -1)) {
      expect(text.length).toBeLessThanOrEqual(JSON_CHUNK_CHARS + 400);
      expect(text.length).toBeGreaterThan(JSON_CHUNK_CHARS - 400);
    }
    // 16 bytes of header and 2 per character: a two-byte string under V8's 128 KiB threshold.
    for (const text of texts.slice(1)) expect(16 + 2 * text.length).toBeLessThan(128 * 1024);
    expect(texts.flatMap((text) => JSON.parse(text) as unknown[])).toEqual(wide);
    expect(value).toEqual(wide);

    // Elements of over JSON_CHUNK_CHARS each still go a few at a time, not one per slice.
    const huge = Array.from({ length: 2_000 }, (_, i) => ({ id: i, text: 'y'.repeat(JSON_CHUNK_CHARS) }));
    const hugeTexts = chunked(huge).texts;
    expect(hugeTexts.slice(1).map((text) => (JSON.parse(text) as unknown[]).length)).toEqual(
      Array.from({ length: Math.ceil((2_000 - JSON_FIRST_CHUNK_ELEMENTS) / 16) }, (_, k) => Math.min(16, 2_000 - JSON_FIRST_CHUNK_ELEMENTS - 16 * k)),
    );
  });

  describe('an object holding a big array: that member goes in slices, the rest as the text around it', () => {
    function withMember(input: unknown) {
      const texts: string[] = [];
      const snapshot = snapshotFrozenJsonInChunks(input, 'value', (json) => void texts.push(json));
      return { ...snapshot, texts };
    }

    it('hands out the first big member a slice at a time; the value is a detached deep-frozen copy, its keys in order', () => {
      const input = { total: 2_500, items: rows(2_500), more: rows(2_200), next: { cursor: 'c', tags: ['x'] } };
      const { value, chunks, member, texts } = withMember(input);
      expect(chunks).toBe(texts.length);
      expect(texts.flatMap((text) => JSON.parse(text) as unknown[])).toEqual(input.items);
      expect(member).toEqual({ path: ['items'], frameJson: JSON.stringify({ ...input, items: null }) });
      expect(value).toEqual(input);
      expect(Object.keys(value as object)).toEqual(['total', 'items', 'more', 'next']);
      const copy = value as typeof input;
      expect([copy, copy.items, copy.items[2_400].tags, copy.more, copy.more[5].nested, copy.next.tags].every((node) => Object.isFrozen(node))).toBe(true);
      expect(copy.items).not.toBe(input.items);
    });

    it("finds the array one object further down, as an MCP tool's result holds it, and no further", () => {
      const result = { content: [{ type: 'text', text: 'rows' }], structuredContent: { total: 2_500, items: rows(2_500) }, isError: false };
      const { value, chunks, member, texts } = withMember(result);
      expect(chunks).toBeGreaterThan(1);
      expect(texts.flatMap((text) => JSON.parse(text) as unknown[])).toEqual(result.structuredContent.items);
      expect(member).toEqual({ path: ['structuredContent', 'items'], frameJson: JSON.stringify({ ...result, structuredContent: { total: 2_500, items: null } }) });
      expect(value).toEqual(result);
      const copy = value as typeof result;
      expect([copy, copy.content, copy.content[0], copy.structuredContent, copy.structuredContent.items].every((node) => Object.isFrozen(node))).toBe(true);

      const deeper = { a: { b: { items: rows(2_500) } } };
      const whole = withMember(deeper);
      expect([whole.chunks, whole.texts.length, whole.member]).toEqual([0, 0, undefined]);
      expect(whole.value).toEqual(deeper);
      // The first in key order, whichever depth.
      expect(withMember({ meta: { items: rows(2_100) }, items: rows(2_100) }).member?.path).toEqual(['meta', 'items']);
    });

    it('keeps a member named __proto__ an own key, as JSON.parse makes it', () => {
      const input = JSON.parse(`{"a":1,"__proto__":${JSON.stringify(rows(2_100))}}`) as Record<string, unknown>;
      const { value, member } = withMember(input);
      expect(member?.path).toEqual(['__proto__']);
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(Object.hasOwn(value as object, '__proto__')).toBe(true);
      expect(JSON.stringify(value)).toBe(JSON.stringify(input));
    });

    it('reads each member once, getters included', () => {
      let itemsReads = 0;
      let otherReads = 0;
      const input = {
        get items() {
          itemsReads++;
          return rows(2_500);
        },
        get other() {
          otherReads++;
          return 'x';
        },
      };
      expect(withMember(input).member?.path).toEqual(['items']);
      expect([itemsReads, otherReads]).toEqual([1, 1]);
    });

    it('names a violation before, in, after or around the member as the one-walk snapshot does', () => {
      const inMember = { items: rows(2_500) };
      (inMember.items[2_100] as { nested: unknown }).nested = { ok: undefined };
      const cyclicElement: Record<string, unknown[]> = { items: rows(2_500) };
      cyclicElement.items[2_100] = cyclicElement;
      const cyclicMember: Record<string, unknown> = { items: rows(2_500) };
      cyclicMember.meta = { back: cyclicMember };
      const hidden = { items: rows(2_500) };
      Object.defineProperty(hidden, 'secret', { value: 1, enumerable: false });
      class Page {
        items = rows(2_500);
      }
      const nested: { result: { items: unknown[]; back?: unknown } } = { result: { items: rows(2_500) } };
      nested.result.items[2_200] = nested;
      const nestedBack: { result: { items: unknown[]; back?: unknown } } = { result: { items: rows(2_500) } };
      nestedBack.result.back = nestedBack;
      const nestedLossy = { result: { items: rows(2_500), at: () => 1 } };
      for (const input of [{ before: undefined, items: rows(2_500) }, inMember, { items: rows(2_500), after: NaN }, cyclicElement, cyclicMember, hidden, new Page(), nested, nestedBack, nestedLossy]) {
        expect(lossy(input)).toEqual(oneWalk(input));
      }
    });
  });

  it('takes smaller arrays and other values whole, handing nothing out', () => {
    for (const input of [rows(2 * JSON_CHUNK_ELEMENTS - 1), { rows: rows(2 * JSON_CHUNK_ELEMENTS - 1) }, [rows(3_000)], 'text', 1]) {
      const { value, chunks, texts } = chunked(input);
      expect([chunks, texts.length]).toEqual([0, 0]);
      expect(value).toEqual(input);
    }
  });

  it('reads each element once, getters included', () => {
    const input: unknown[] = rows(2_500);
    let reads = 0;
    Object.defineProperty(input, 2_100, { get: () => (reads++, { id: 'got' }), enumerable: true, configurable: true });
    const { value } = chunked(input);
    expect(reads).toBe(1);
    expect((value as unknown[])[2_100]).toEqual({ id: 'got' });
  });

  it('names the place of a violation as the one-walk snapshot does, in any slice', () => {
    const withUndefined: unknown[] = rows(2_500);
    (withUndefined[2_100] as { nested: unknown }).nested = { ok: undefined };
    expect(lossy(withUndefined)).toEqual({ path: 'value[2100].nested.ok', message: 'is undefined, which JSON drops: omit the key or use null' });

    const throwing: unknown[] = rows(2_500);
    Object.defineProperty(throwing, 1_500, { get: () => { throw new Error('no'); }, enumerable: true, configurable: true });
    expect(lossy(throwing).path).toBe('value[1500]');

    const cyclic: unknown[] = rows(2_500);
    cyclic[5] = cyclic;
    expect(lossy(cyclic)).toEqual({ path: 'value[5]', message: 'is a cycle: it contains itself' });

    class Rows extends Array {}
    const subclass = Rows.from(rows(2_500));
    expect(lossy(subclass)).toEqual({ path: 'value', message: 'is an instance of an Array subclass: use a plain array' });

    const sparse: unknown[] = rows(2_500);
    delete sparse[1_999];
    expect(lossy(sparse).path).toBe('value');

    const { proxy, revoke } = Proxy.revocable(rows(2_500), {});
    revoke();
    expect(lossy(proxy)).toEqual({ path: 'value', message: 'could not be read: a getter or proxy threw while reading it' });
  });

  it("checks the array's own keys, of every kind, after its elements: the same error as the one-walk snapshot", () => {
    const hidden: unknown[] = rows(2_500);
    Object.defineProperty(hidden, 'x', { value: 1, enumerable: false });
    const symbol: unknown[] = rows(2_500);
    Object.defineProperty(symbol, Symbol('t'), { value: 1, enumerable: false });
    for (const input of [hidden, symbol]) {
      const texts: string[] = [];
      let violation: unknown;
      try {
        snapshotFrozenJsonInChunks(input, 'value', (json) => texts.push(json));
      } catch (error) {
        violation = (error as LossyJsonError).violation;
      }
      expect(texts.length).toBeGreaterThan(0);
      expect(violation).toEqual(oneWalk(input));
    }
  });

  it("checks a clean big array's own keys without listing its indices, and an array with a hidden accessor the full way, its getter unread", () => {
    // A list of 2,500 indices is what the check avoids; the inspector names the other keys.
    const input = rows(2_500);
    const ownKeys = vi.spyOn(Reflect, 'ownKeys');
    const names = vi.spyOn(Object, 'getOwnPropertyNames');
    try {
      expect(chunked(input).value).toEqual(input);
      expect([...ownKeys.mock.calls, ...names.mock.calls].filter(([target]) => target === input)).toEqual([]);
    } finally {
      ownKeys.mockRestore();
      names.mockRestore();
    }

    let reads = 0;
    const accessor: unknown[] = rows(2_500);
    Object.defineProperty(accessor, 'extra', { get: () => ++reads, enumerable: false });
    expect(lossy(accessor)).toEqual(oneWalk(accessor));
    expect(lossy(accessor).path).toBe('value');
    expect(reads).toBe(0);
  });

  it('copies nothing of an array whose key list is shorter than its length (a lying proxy)', () => {
    let reads = 0;
    const claims = new Proxy(rows(2_500), {
      get: (target, key, receiver) => (key === 'length' ? 1e9 : (reads++, Reflect.get(target, key, receiver))),
    });
    expect(lossy(claims).path).toBe('value');
    expect(reads).toBeLessThan(10);
  });
  describe("each slice's shape: where its elements hold containers", () => {
    const slices = (input: unknown[]) => chunked(input).shapes;

    it('names the keys at which every element holds a container of scalars', () => {
      // rows(): { id, tags: [...], nested: { ok } }, in that order.
      expect(slices(rows(2_500))).toEqual(Array(4).fill('["tags","nested"]'));
      // Scalars, and containers of scalars: no key to name.
      const leaves = Array.from({ length: 2_500 }, (_, i) => (i % 3 === 0 ? i : i % 3 === 1 ? [i, 'x'] : { i }));
      expect(slices(leaves)).toEqual(Array(4).fill('[]'));
    });

    it('is unknown for a slice where one element differs, holds a container deeper, or was copied by the walker', () => {
      const extraKey: unknown[] = rows(2_500);
      (extraKey[1_000] as Record<string, unknown>).more = [1];
      const deeper: unknown[] = rows(2_500);
      (deeper[1_300] as Record<string, unknown>).tags = [{ deep: true }];
      const reordered: unknown[] = rows(2_500);
      const { id, tags, nested } = reordered[1_700] as { id: number; tags: string[]; nested: object };
      reordered[1_700] = { id, nested, tags };
      const scalarAmongRows: unknown[] = rows(2_500);
      scalarAmongRows[2_300] = null;
      const fromAnotherRealm: unknown[] = rows(2_500);
      fromAnotherRealm[100] = vm.runInNewContext('({ id: 100, tags: ["a"], nested: { ok: true } })');
      const shaped = '["tags","nested"]';
      // Slices: elements 0-249, 250-1249, 1250-2249, 2250-2499.
      expect(slices(extraKey)).toEqual([shaped, '', shaped, shaped]);
      expect(slices(deeper)).toEqual([shaped, shaped, '', shaped]);
      expect(slices(reordered)).toEqual([shaped, shaped, '', shaped]);
      expect(slices(scalarAmongRows)).toEqual([shaped, shaped, shaped, '']);
      expect(slices(fromAnotherRealm)).toEqual(['', shaped, shaped, shaped]);
    });

    it('learns nothing from another value a getter copies meanwhile', () => {
      const input: unknown[] = rows(2_500);
      Object.defineProperty(input[10], 'id', {
        get: () => (snapshotFrozenJson({ other: [1], more: { a: 1 } }), 10),
        enumerable: true,
      });
      expect(slices(input)).toEqual(Array(4).fill('["tags","nested"]'));
    });
  });
});
