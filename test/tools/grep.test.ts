import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers.ts';

let h: Harness;
beforeEach(async () => {
  h = await createHarness({ limits: { renderPageSize: 2, maxResults: 40, maxLineChars: 20 } });
  await h.file('src/a.ts', 'export const alpha = 1;\nconst beta = 2;\r\nexport function gamma() {}\n');
  await h.file('src/b.js', 'export default 3;\n');
  await h.file('docs/notes.md', 'Export notes\n');
  await h.file('node_modules/x/index.js', 'export const hidden = 1;\n');
  await h.file('bin/blob.dat', new Uint8Array([0x65, 0x78, 0x70, 0x6f, 0x72, 0x74, 0x00]));
});
afterEach(async () => {
  await h.dispose();
});

describe('grep', () => {
  it('returns matches in walk order with path:line:text render; skips binary files and node_modules', async () => {
    const result = await h.call('grep', { pattern: '^export' });
    expect(result.value).toEqual({
      matches: [
        { path: 'src/a.ts', lineNumber: 1, line: 'export const alpha =… [line truncated: 23 characters]' },
        { path: 'src/a.ts', lineNumber: 3, line: 'export function gamm… [line truncated: 26 characters]' },
        { path: 'src/b.js', lineNumber: 1, line: 'export default 3;' },
      ],
    });
    expect(h.text(result)).toBe(
      'src/a.ts:1:export const alpha =… [line truncated: 23 characters]\n' +
        'src/a.ts:3:export function gamm… [line truncated: 26 characters]\n' +
        '… 1 more matches not shown; narrow the pattern, path or glob to see them',
    );
  });

  it('ignoreCase, glob filter on names, a single file as path, CRLF stripped', async () => {
    expect(await h.value('grep', { pattern: '^export notes', ignoreCase: true })).toEqual({
      matches: [{ path: 'docs/notes.md', lineNumber: 1, line: 'Export notes' }],
    });
    expect(await h.value('grep', { pattern: 'export', glob: '*.js' })).toEqual({
      matches: [{ path: 'src/b.js', lineNumber: 1, line: 'export default 3;' }],
    });
    expect(await h.value('grep', { pattern: 'beta = 2;$', path: 'src/a.ts' })).toEqual({
      matches: [{ path: 'src/a.ts', lineNumber: 2, line: 'const beta = 2;' }],
    });
    expect(await h.value('grep', { pattern: 'export', path: 'src', glob: 'b.*' })).toEqual({
      matches: [{ path: 'src/b.js', lineNumber: 1, line: 'export default 3;' }],
    });
  });

  it('no matches renders a plain note', async () => {
    const result = await h.call('grep', { pattern: 'zzz' });
    expect(result.value).toEqual({ matches: [] });
    expect(h.text(result)).toBe('No matches found');
  });

  it('value holds every match up to the cap; render shows the first page and the cap note', async () => {
    await h.file('many.txt', Array.from({ length: 100 }, (_, i) => `hit ${i}`).join('\n'));
    const result = await h.call('grep', { pattern: '^hit', path: 'many.txt' });
    const matches = (result.value as { matches: { lineNumber: number }[] }).matches;
    expect(matches).toHaveLength(40);
    expect(matches.map((m) => m.lineNumber)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(h.text(result)).toBe(
      'many.txt:1:hit 0\nmany.txt:2:hit 1\n' +
        '… 38 more matches not shown; narrow the pattern, path or glob to see them\n' +
        '(collection stopped at the cap of 40 matches; there may be more: narrow the pattern, path or glob)',
    );
  });

  it('an invalid regular expression is a clear failure', async () => {
    expect(await h.failure('grep', { pattern: '(unclosed' })).toBe(
      'pattern is not a valid JavaScript regular expression (Invalid regular expression: /(unclosed/: Unterminated group): fix or escape it',
    );
  });

  it('is concurrency-safe', () => {
    expect(h.registry.get('grep')?.isConcurrencySafe({ pattern: 'x' })).toBe(true);
  });
});
