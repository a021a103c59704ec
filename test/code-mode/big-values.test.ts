/**
 * A nested call's big array value reaches the program a slice at a time (sandbox/crossing/value-slices.ts;
 * the in-process runtime parses each slice while the host makes the next's text): the program sees the same
 * deep-frozen plain array as with a value sent whole, on both runtimes. A value that fails after
 * slices went (its schema, a hook replacing it) is never seen half-made.
 */
import { afterEach, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import type { JsonValue } from '../../src/json.ts';
import { createBench, valueOf, type Bench } from './harness.ts';

let bench: Bench;
afterEach(() => bench.close());

const ROWS = 4_500;
const rows = (n: number, offset = 0) => Array.from({ length: n }, (_, i) => ({ id: i + offset, name: `row ${i + offset}`, tags: ['a', 'b'] }));

const big = defineTool({
  name: 'big',
  description: 'Returns many rows.',
  parameters: { offset: { type: 'integer' } },
  output: { schema: { type: 'json' }, render: (_args, value) => [{ type: 'text', text: `${(value as unknown[]).length} rows` }] },
  isConcurrencySafe: () => true,
  execute: async (args) => rows(ROWS, args.offset ?? 0),
});

/** A tool named `name` returning `value`, its output any JSON. */
const jsonTool = (name: string, value: () => JsonValue) =>
  defineTool({
    name,
    description: `Returns ${name}.`,
    parameters: {},
    output: { schema: { type: 'json' }, render: () => [{ type: 'text', text: name }] },
    isConcurrencySafe: () => true,
    execute: async () => value(),
  });

it('a big array arrives whole: plain, deep-frozen, in order, untouched by index setters on Array.prototype', async () => {
  bench = createBench();
  bench.registry.register(big);
  const result = await bench.runCode(
    `let leaked = 0;
     Object.defineProperty(Array.prototype, '3000', { set(v) { leaked++; }, configurable: true });
     const rows = await tools.big({});
     delete (Array.prototype as any)['3000'];
     const ids = rows.map((row) => row.id);
     return {
       length: rows.length, plain: Object.getPrototypeOf(rows) === Array.prototype && Array.isArray(rows),
       frozen: Object.isFrozen(rows) && Object.isFrozen(rows[3999]) && Object.isFrozen(rows[3999].tags),
       inOrder: ids.every((id, i) => id === i), last: rows[rows.length - 1], leaked,
     };`,
  );
  expect(valueOf(result).result).toEqual({ length: ROWS, plain: true, frozen: true, inOrder: true, last: { id: ROWS - 1, name: `row ${ROWS - 1}`, tags: ['a', 'b'] }, leaked: 0 });
  // The nested call's durable event holds its rendered content, as for a value sent whole.
  const dispatched = bench.sink.events('s1').filter((event) => event.type === 'tool/ptc-dispatch');
  expect(dispatched.map((event) => ('content' in event ? event.content : undefined))).toEqual([[{ type: 'text', text: `${ROWS} rows` }]]);
});

it('a big array of mixed shapes arrives whole and frozen to the last container', async () => {
  // A row with a container one level deeper, a null among the rows, an array of arrays.
  const mixed = rows(ROWS).map((row, i): JsonValue =>
    i === 1_300 ? { ...row, meta: { deep: { list: [i] } } } : i === 2_600 ? null : i === 3_900 ? [1, [2, [3]]] : row,
  );
  bench = createBench();
  bench.registry.register(jsonTool('mixed', () => mixed));
  const result = await bench.runCode(
    `const value = await tools.mixed({});
     let containers = 0, unfrozen = 0;
     const visit = (node: unknown): void => {
       if (typeof node !== 'object' || node === null) return;
       containers++;
       if (!Object.isFrozen(node)) unfrozen++;
       for (const child of Object.values(node)) visit(child);
     };
     visit(value);
     return { containers, unfrozen, text: JSON.stringify(value) };`,
  );
  // Two per row (itself, its tags) but for the null and the array of arrays; the outer array; the
  // deep row's three more; the array of arrays' three.
  expect(valueOf(result).result).toEqual({ containers: 2 * (ROWS - 2) + 1 + 3 + 3, unfrozen: 0, text: JSON.stringify(mixed) });
});

it('several big values at once each arrive whole', async () => {
  bench = createBench();
  bench.registry.register(big);
  const result = await bench.runCode(
    `const all = await Promise.all([0, 10_000, 20_000].map((offset) => tools.big({ offset })));
     return all.map((rows) => [rows.length, rows[0].id, rows[rows.length - 1].id]);`,
  );
  expect(valueOf(result).result).toEqual([
    [ROWS, 0, ROWS - 1],
    [ROWS, 10_000, 10_000 + ROWS - 1],
    [ROWS, 20_000, 20_000 + ROWS - 1],
  ]);
});

it('a big value that fails its schema after slices went is an error, never a value', async () => {
  bench = createBench();
  bench.registry.register(
    defineTool({
      name: 'numbers',
      description: 'Returns numbers, and one string among them.',
      parameters: {},
      output: { schema: { type: 'array', items: { type: 'integer' } }, render: () => [{ type: 'text', text: 'numbers' }] },
      execute: async () => [...Array.from({ length: ROWS - 1 }, (_, i) => i), 'oops'] as unknown as number[],
    }),
  );
  const result = await bench.runCode(
    `try { const n = await tools.numbers({}); return { got: n.length }; }
     catch (e) { return { code: (e as any).code, schema: (e as Error).message.includes('does not match its output schema') }; }`,
  );
  expect(valueOf(result).result).toEqual({ code: 'INVALID_TOOL_OUTPUT', schema: true });
});

it('a hook that replaces a big value: the program gets the replacement, not the slices', async () => {
  bench = createBench();
  bench.registry.register(big);
  bench.registry.hook('tools/post-execute', (exec) => (exec.name === 'big' ? { kind: 'accept', value: [{ replaced: true }] } : undefined));
  const result = await bench.runCode('const rows = await tools.big({}); return rows;');
  expect(valueOf(result).result).toEqual([{ replaced: true }]);
});

it('a program that poisons Array.prototype (an index setter at 0, its own push) still gets its values, small and big, and sees no internal record', async () => {
  bench = createBench();
  bench.registry.register(big);
  const result = await bench.runCode(
    `const seen: unknown[] = Object.setPrototypeOf([], null);
     Object.defineProperty(Array.prototype, '0', { set(v) { seen[seen.length] = v; }, configurable: true });
     const push = Array.prototype.push;
     Array.prototype.push = function (...items: unknown[]) { for (const item of items) seen[seen.length] = item; return 0; };
     let small: unknown;
     let rows: readonly unknown[] = [];
     try {
       small = await tools.big({ offset: -1 }).then(() => 'called');
       rows = await tools.big({});
     } finally {
       Array.prototype.push = push;
       delete (Array.prototype as any)['0'];
     }
     return { small, rows: rows.length, seen: seen.length };`,
  );
  expect(valueOf(result).result).toEqual({ small: 'called', rows: ROWS, seen: 0 });
});

it("an object holding a big array (as an MCP tool's structured content does) arrives whole: its keys in order, deep-frozen, the array plain", async () => {
  bench = createBench();
  // Without a prototype, as a plain object may be.
  bench.registry.register(jsonTool('page', () => ({ total: ROWS, items: rows(ROWS), next: { cursor: 'c2', tags: ['x'] }, __proto__: null }) as unknown as JsonValue));
  const result = await bench.runCode(
    `const page = await tools.page({});
     return {
       keys: Object.keys(page), total: page.total, length: page.items.length, last: page.items[page.items.length - 1],
       next: page.next, plain: Object.getPrototypeOf(page.items) === Array.prototype,
       frozen: Object.isFrozen(page) && Object.isFrozen(page.items) && Object.isFrozen(page.items[4000].tags) && Object.isFrozen(page.next.tags),
     };`,
  );
  expect(valueOf(result).result).toEqual({
    keys: ['total', 'items', 'next'],
    total: ROWS,
    length: ROWS,
    last: { id: ROWS - 1, name: `row ${ROWS - 1}`, tags: ['a', 'b'] },
    next: { cursor: 'c2', tags: ['x'] },
    plain: true,
    frozen: true,
  });
});

it("an MCP-shaped result holding its rows in structuredContent arrives whole and deep-frozen", async () => {
  bench = createBench();
  bench.registry.register(jsonTool('search', () => ({ content: [{ type: 'text', text: 'found' }], structuredContent: { total: ROWS, items: rows(ROWS) } })));
  const result = await bench.runCode(
    `const r = await tools.search({});
     const items = r.structuredContent.items;
     return {
       keys: [Object.keys(r), Object.keys(r.structuredContent)], length: items.length, last: items[items.length - 1], text: r.content[0].text,
       frozen: [r, r.content, r.content[0], r.structuredContent, items, items[10], items[10].tags].every((node) => Object.isFrozen(node)),
     };`,
  );
  expect(valueOf(result).result).toEqual({
    keys: [['content', 'structuredContent'], ['total', 'items']],
    length: ROWS,
    last: { id: ROWS - 1, name: `row ${ROWS - 1}`, tags: ['a', 'b'] },
    text: 'found',
    frozen: true,
  });
});
