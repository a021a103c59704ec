/**
 * Random grep and glob patterns (nested groups, alternations, quantifiers,
 * braces, extglobs, classes, unbalanced syntax, and nestings far past the
 * caps) through the real tools: every call settles with a value or a typed
 * failure (`TOOL_FAILED` for a refused pattern, `TOOL_TIMEOUT` for one that
 * backtracks past the search limit), never with a host path, and the host
 * keeps serving ordinary calls. Fixed seed, bounded runs.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolExecutionResult } from '../../../src/tool.ts';
import { createHarness, type Harness } from '../../tools/helpers.ts';
import { HOST_LEAK } from '../harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ limits: { searchTimeoutMs: 500, maxResults: 100 } });
  await h.file('a.txt', `${'a'.repeat(22)}!\nabcabc\nfoo.bar(1, 2)\n`);
  await h.file('src/x.ts', 'export const x = 1;\n');
  await h.file(`deep/${'a'.repeat(60)}.txt`, 'aaaa\n');
});
afterAll(async () => {
  await h.dispose();
});

/** Wraps `inner` `depth` times in the construct `open … close`. */
const nest = (open: string, inner: string, close: string, depth: number): string => open.repeat(depth) + inner + close.repeat(depth);

const regex: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', 'b', '.', '\\d', '\\w', '[a-c]', '[^!]', '!', '^', '$', '\\1', '(?=a)', '(?<!b)'),
    fc.tuple(tie('node'), fc.constantFrom('*', '+', '?', '{2}', '{1,5}', '{0,}', '*?', '+?')).map(([n, q]) => `(?:${n})${q}`),
    fc.tuple(tie('node'), tie('node')).map(([x, y]) => `${x}|${y}`),
    fc.tuple(tie('node'), tie('node')).map(([x, y]) => x + y),
    tie('node').map((n) => `(${n})`),
  ),
})).node;

const glob: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', '*', '?', '**/', '[ab]', '[!a]', '.txt', 'src/', '\\*', '{1..3}'),
    fc.tuple(fc.constantFrom('+(', '@(', '!(', '*(', '?('), tie('node'), tie('node')).map(([o, x, y]) => `${o}${x}|${y})`),
    fc.tuple(tie('node'), tie('node')).map(([x, y]) => `{${x},${y}}`),
    fc.tuple(tie('node'), tie('node')).map(([x, y]) => x + y),
  ),
})).node;

/** Around the depth cap (20) half the time, up to thousands (past the length cap) otherwise. */
const depth = (max: number) => fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max }));
/** Deep or long nestings of one construct: most past the caps, some just under. */
const deepRegex = fc
  .tuple(fc.constantFrom(['(a|', 'a', ')'], ['(?:', 'a', ')+'], ['(', 'a*', ')*'], ['(?=', 'a', ')']), depth(8000))
  .map(([[o, i, c], d]) => nest(o, i, c, d));
const deepGlob = fc
  .tuple(fc.constantFrom(['+(', 'a', ')'], ['{a,', 'a', '}'], ['@(a|', 'a', ')'], ['*(', '*a', ')']), depth(3000))
  .map(([[o, i, c], d]) => nest(o, i, c, d));
/** Raw syntax soup: unbalanced and invalid patterns included. */
const soup = fc.string({ unit: fc.constantFrom(...'()[]{}|*+?\\^$.,!@-a'.split('')), maxLength: 60 });

function expectSettled(result: ToolExecutionResult): void {
  if (!result.isError) return;
  expect(['TOOL_FAILED', 'TOOL_TIMEOUT'], result.error.message).toContain(result.error.info?.code);
  expect(result.error.message).not.toMatch(HOST_LEAK);
}

async function stillServing(): Promise<void> {
  expect(await h.value('grep', { pattern: 'export' })).toEqual({ matches: [{ path: 'src/x.ts', lineNumber: 1, line: 'export const x = 1;' }] });
}

describe('pattern fuzzing', () => {
  it('grep: random regexes and glob filters settle typed', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(regex, deepRegex, soup),
        fc.option(fc.oneof(glob, deepGlob, soup), { nil: undefined }),
        fc.boolean(),
        async (pattern, filter, ignoreCase) => {
          expectSettled(await h.call('grep', { pattern, ignoreCase, ...(filter === undefined ? {} : { glob: filter }) }));
        },
      ),
      { seed: 12, numRuns: 80 },
    );
    await stillServing();
  });

  it('glob: random extglobs, braces and nestings settle typed', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(glob, deepGlob, soup), fc.constantFrom(undefined, 'deep', 'src'), async (pattern, path) => {
        expectSettled(await h.call('glob', { pattern, ...(path === undefined ? {} : { path }) }));
      }),
      { seed: 12, numRuns: 80 },
    );
    await stillServing();
  });
});
