/**
 * grep and glob patterns from a hostile program: capped before compiling,
 * matched off the host's event loop, and stopped by the call's deadline.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkGlobPattern, checkRegexPattern } from '../../src/tools/pattern-caps.ts';
import type { GrepJob } from '../../src/tools/search-jobs.ts';
import { createSearchPool } from '../../src/tools/search-pool.ts';
import { createHarness, type Harness } from './helpers.ts';

let h: Harness;
beforeEach(async () => {
  h = await createHarness({ limits: { searchTimeoutMs: 1000, searchWorkers: 2 } });
  await h.file('h.txt', 'x\n');
  await h.file('src/a.ts', 'export const alpha = 1;\n');
  await h.file('stuck/line.txt', `${'a'.repeat(34)}!\n`);
  await h.file(`names/${'a'.repeat(100)}`, '');
});
afterEach(async () => {
  await h.dispose();
});

/** Backtracks for ever on V8 over stuck/line.txt; RE2 refuses it (a backreference), so it runs on V8 in a worker. */
const HOSTILE = '^(a+)+\\1$';

const codeOf = (result: Awaited<ReturnType<Harness['call']>>) => (result.isError ? result.error.info?.code : 'ok');

/** Resolves with the labels in the order they happened: the call's settling vs a turn of the host loop. */
async function raceWithLoop(pending: Promise<unknown>): Promise<string[]> {
  const order: string[] = [];
  const settled = pending.then(() => order.push('call settled'));
  await new Promise((resolve) => setTimeout(resolve, 0));
  order.push('loop turned');
  await settled;
  return order;
}

/** The nesting depth a check reports for `pattern` under a depth cap of 0 (0 when it passes). */
function reportedDepth(check: (pattern: string) => void, pattern: string): number {
  try {
    check(pattern);
    return 0;
  } catch (error) {
    return Number(/ (\d+) deep, over the limit of 0/.exec((error as Error).message)?.[1]);
  }
}
const depthCap = { maxPatternChars: 1_000_000, maxPatternDepth: 0 };
const regexNesting = (source: string) => reportedDepth((p) => checkRegexPattern(p, '', depthCap), source);
const globNesting = (pattern: string) => reportedDepth((p) => checkGlobPattern('pattern', p, depthCap), pattern);

describe('pattern caps (checked before compiling)', () => {
  it('the regex depth counts groups, skipping escapes and character classes', () => {
    expect(regexNesting('a(b(c)d)(e)')).toBe(2);
    expect(regexNesting('\\((\\()[(((]')).toBe(1);
    expect(regexNesting('[\\]((]')).toBe(0);
    expect(regexNesting('(a|'.repeat(7000) + 'a' + ')'.repeat(7000))).toBe(7000);
  });

  it('the glob depth counts groups, extglobs and braces together', () => {
    expect(globNesting('src/**/*.{ts,js}')).toBe(1);
    expect(globNesting('+(a|@(b|{c,d}))')).toBe(3);
    expect(globNesting('\\{\\(a')).toBe(0);
    expect(globNesting('{a,'.repeat(50) + 'a' + '}'.repeat(50))).toBe(50);
  });

  it('grep refuses the process-crashing regex (7,000 nested groups) without compiling it', async () => {
    const pattern = '(a|'.repeat(7000) + 'a' + ')'.repeat(7000);
    expect(await h.failure('grep', { pattern, path: 'h.txt' })).toBe(
      `pattern is ${pattern.length} characters, over the 1000-character limit: use a shorter pattern (or several calls)`,
    );
    const deep = '('.repeat(21) + 'a' + ')'.repeat(21);
    expect(await h.failure('grep', { pattern: deep, path: 'h.txt' })).toBe('pattern nests groups 21 deep, over the limit of 20: flatten the pattern');
    expect(await h.value('grep', { pattern: '('.repeat(20) + 'x' + ')'.repeat(20), path: 'h.txt' })).toEqual({
      matches: [{ path: 'h.txt', lineNumber: 1, line: 'x' }],
    });
  });

  it('glob refuses deep extglobs and braces; grep refuses them in its glob filter', async () => {
    const extglob = '+('.repeat(2000) + 'a' + ')'.repeat(2000);
    expect(await h.failure('glob', { pattern: extglob })).toMatch(/^pattern is 6001 characters, over the 1000-character limit/);
    const braces = '{a,'.repeat(30) + 'a' + '}'.repeat(30);
    expect(await h.failure('glob', { pattern: braces })).toBe(
      'pattern nests groups, extglobs and braces 30 deep, over the limit of 20: flatten the pattern',
    );
    expect(await h.failure('grep', { pattern: 'x', glob: braces })).toBe(
      'glob nests groups, extglobs and braces 30 deep, over the limit of 20: flatten the pattern',
    );
    const result = await h.call('glob', { pattern: extglob });
    expect(result.isError && result.error.info?.code).toBe('TOOL_FAILED');
  });

  it('an invalid regex is still refused with its parse error', async () => {
    expect(await h.failure('grep', { pattern: '(' })).toMatch(/^pattern is not a valid JavaScript regular expression \(.*\): fix or escape it$/);
  });

  it('the caps are settings', async () => {
    const small = await createHarness({ limits: { maxPatternChars: 5, maxPatternDepth: 1 } });
    try {
      expect(await small.failure('grep', { pattern: 'abcdef' })).toMatch(/over the 5-character limit/);
      expect(await small.failure('glob', { pattern: '{,{}}' })).toMatch(/2 deep, over the limit of 1/);
    } finally {
      await small.dispose();
    }
  });
});

describe('matching is bounded (worker thread, per-call deadline)', () => {
  it('grep ^(a+)+$ over 34 a and a ! ends at once on the linear engine; with a backreference it runs on V8 and ends TOOL_TIMEOUT', async () => {
    expect(await h.value('grep', { pattern: '^(a+)+$', path: 'stuck/line.txt' })).toEqual({ matches: [] });
    expect(await h.value('grep', { pattern: '^(a+)+!$', path: 'stuck', ignoreCase: true })).toEqual({ matches: [{ path: 'stuck/line.txt', lineNumber: 1, line: `${'a'.repeat(34)}!` }] });
  });

  it('grep with a backtracking pattern RE2 refuses fails TOOL_TIMEOUT, and the host loop turns while it runs', async () => {
    const pending = h.call('grep', { pattern: HOSTILE, path: 'stuck/line.txt' });
    expect(await raceWithLoop(pending)).toEqual(['loop turned', 'call settled']);
    const result = await pending;
    expect(codeOf(result)).toBe('TOOL_TIMEOUT');
    expect(result.isError && result.error.message).toMatch(/^the search ran past its 1000 ms limit and was stopped: narrow the path or glob, or simplify the pattern/);
  });

  it("glob '*a'×6+'*b' against a 100-character name fails TOOL_TIMEOUT; so does grep's glob filter", async () => {
    const pattern = `${'*a'.repeat(6)}*b`;
    const pending = h.call('glob', { pattern: `names/${pattern}` });
    expect(await raceWithLoop(pending)).toEqual(['loop turned', 'call settled']);
    expect(codeOf(await pending)).toBe('TOOL_TIMEOUT');
    expect(codeOf(await h.call('grep', { pattern: 'x', path: 'names', glob: pattern }))).toBe('TOOL_TIMEOUT');
  });

  it('more hostile calls than workers all end TOOL_TIMEOUT (queued ones wait), and ordinary calls work afterwards', async () => {
    const hostile = Array.from({ length: 3 }, () => h.call('grep', { pattern: HOSTILE, path: 'stuck' }));
    const codes = (await Promise.all(hostile)).map(codeOf);
    expect(codes).toEqual(Array(3).fill('TOOL_TIMEOUT'));
    expect(await h.value('grep', { pattern: 'alpha' })).toEqual({ matches: [{ path: 'src/a.ts', lineNumber: 1, line: 'export const alpha = 1;' }] });
    expect(await h.value('glob', { pattern: '**/*.ts' })).toEqual({ paths: ['src/a.ts'] });
  });
});

describe('search pool', () => {
  it('never runs more workers than its cap; a queued job cancelled while waiting never starts', async () => {
    const pool = createSearchPool({ timeoutMs: 60_000, maxWorkers: 2, heapMiB: 64 });
    const job: GrepJob = {
      kind: 'grep',
      root: h.root,
      base: { absolute: `${h.root}/stuck/line.txt`, display: 'stuck/line.txt', isDirectory: false },
      pattern: HOSTILE,
      flags: '',
      ignoreDirectories: [],
      maxResults: 10,
      maxGrepFileBytes: 1024,
      maxLineChars: 100,
    };
    const controllers = Array.from({ length: 4 }, () => new AbortController());
    const runs = controllers.map((c) => pool.run({ ...job }, c.signal).then(() => 'done', (e: Error) => e.name));
    expect(pool.size).toBe(2);
    controllers[3].abort();
    expect(await runs[3]).toBe('AbortError');
    expect(pool.size).toBe(2);
    for (const c of controllers) c.abort();
    expect(await Promise.all(runs)).toEqual(['AbortError', 'AbortError', 'AbortError', 'AbortError']);
    await pool.close();
    expect(pool.size).toBe(0);
  });
});
