/**
 * The data the bench's tools return, and the tools that return it, shared by the peer bench and
 * the A/B bench: built once per process, the same objects for every executor and every tree.
 */
import type { defineTool as DefineTool } from '../src/define-tool.ts';

/** 10,000 objects, about 1 MB of JSON. */
export const BIG = Array.from({ length: 10_000 }, (_, i) => ({
  id: i,
  name: `item-${String(i).padStart(6, '0')}`,
  active: i % 3 === 0,
  score: (i * 7919) % 1000 / 10,
  tags: ['alpha', i % 2 === 0 ? 'even' : 'odd'],
  note: 'lorem ipsum dolor sit amet, consectetur',
}));

/** 50 pages of 100 of those objects. */
export const PAGES = Array.from({ length: 50 }, (_, p) => BIG.slice(p * 100, p * 100 + 100));

/** What a program summing the score of the active rows of every page returns. */
export const SUM_OF_PAGES = PAGES.flat().reduce((sum, row) => sum + (row.active ? row.score : 0), 0);

/**
 * `big` (returns {@link BIG}), `wrapped` (returns it as `{ total, items }`, as structured content
 * holds rows) and `page` (one of {@link PAGES}), concurrency-safe, made by the `defineTool` given:
 * the A/B bench passes each tree's own.
 */
export function dataTools(defineTool: typeof DefineTool) {
  const output = { schema: { type: 'json' }, render: (_args: unknown, value: unknown) => [{ type: 'text' as const, text: `${(value as unknown[]).length} rows` }] } as const;
  return [
    defineTool({ name: 'big', description: 'Returns 10,000 rows.', parameters: {}, output, isConcurrencySafe: () => true, execute: async () => BIG }),
    defineTool({
      name: 'wrapped',
      description: 'Returns 10,000 rows as the member of an object.',
      parameters: {},
      output: { schema: { type: 'json' }, render: () => [{ type: 'text' as const, text: `${BIG.length} rows` }] },
      isConcurrencySafe: () => true,
      execute: async () => ({ total: BIG.length, items: BIG }),
    }),
    defineTool({
      name: 'page',
      description: 'Returns one page of 100 rows.',
      parameters: { page: { type: 'integer', required: true } },
      output,
      isConcurrencySafe: () => true,
      execute: async (args) => PAGES[args.page],
    }),
  ];
}

/** `echo`, which returns its integer argument `i`, made by the `defineTool` given. */
export function echoTool(defineTool: typeof DefineTool) {
  return defineTool({
    name: 'echo',
    description: 'Returns its argument.',
    parameters: { i: { type: 'integer', required: true } },
    output: { schema: { type: 'integer' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
    isConcurrencySafe: () => true,
    execute: async (args) => args.i,
  });
}

/** `io`, which returns its integer argument `i` after the host's turn, as a tool waiting on I/O does, made by the `defineTool` given. */
export function ioTool(defineTool: typeof DefineTool) {
  return defineTool({
    name: 'io',
    description: 'Returns its argument after the current turn of the event loop.',
    parameters: { i: { type: 'integer', required: true } },
    output: { schema: { type: 'integer' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
    isConcurrencySafe: () => true,
    execute: (args) => new Promise<number>((resolve) => setImmediate(() => resolve(args.i))),
  });
}
