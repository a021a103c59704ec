import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyPatch } from 'diff';
import { diffHunks, NO_NEWLINE_MARKER, type DiffHunk } from '../../src/tools/diff-hunks.ts';

/** Applies hunks as the unified diff they stand for, with jsdiff: a hunk that does not apply fails. */
function applyHunks(before: string, hunks: readonly DiffHunk[]): string {
  const text = hunks.map((h) => `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@\n${h.lines.join('\n')}\n`).join('');
  const after = applyPatch(before, `--- a\n+++ b\n${text}`);
  if (after === false) throw new Error('the hunks do not apply');
  return after;
}

const lines = (n: number, tag = 'l') => Array.from({ length: n }, (_, i) => `${tag}${i + 1}\n`).join('');

describe('diffHunks', () => {
  it('no change, no hunks', () => {
    expect(diffHunks('a\nb\n', 'a\nb\n')).toEqual([]);
    expect(diffHunks('', '')).toEqual([]);
  });

  it('creation and deletion of a whole file', () => {
    expect(diffHunks('', 'a\nb\n')).toEqual([{ oldStart: 0, oldLines: 0, newStart: 1, newLines: 2, lines: ['+a', '+b'] }]);
    expect(diffHunks('a\n', '')).toEqual([{ oldStart: 1, oldLines: 1, newStart: 0, newLines: 0, lines: ['-a'] }]);
  });

  it('three lines of context, separate hunks for distant changes', () => {
    const before = lines(20);
    const after = before.replace('l2\n', 'L2\n').replace('l18\n', 'L18\n');
    expect(diffHunks(before, after)).toEqual([
      { oldStart: 1, oldLines: 5, newStart: 1, newLines: 5, lines: [' l1', '-l2', '+L2', ' l3', ' l4', ' l5'] },
      { oldStart: 15, oldLines: 6, newStart: 15, newLines: 6, lines: [' l15', ' l16', ' l17', '-l18', '+L18', ' l19', ' l20'] },
    ]);
  });

  it('merges changes whose context overlaps (gap of 6 or fewer lines)', () => {
    const before = lines(12);
    const after = before.replace('l3\n', 'X\n').replace('l10\n', 'Y\n');
    const hunks = diffHunks(before, after);
    expect(hunks).toHaveLength(1);
    expect(hunks[0]).toMatchObject({ oldStart: 1, oldLines: 12, newStart: 1, newLines: 12 });
  });

  it('pure insertion in the middle uses the unified numbering', () => {
    expect(diffHunks('a\nb\n', 'a\nx\nb\n', { context: 0 })).toEqual([
      { oldStart: 1, oldLines: 0, newStart: 2, newLines: 1, lines: ['+x'] },
    ]);
  });

  it('marks a missing final newline like diff -u', () => {
    expect(diffHunks('a\nb', 'a\nb\n')).toEqual([
      { oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines: [' a', '-b', NO_NEWLINE_MARKER, '+b'] },
    ]);
  });

  it('over budget it falls back to one replace block that still applies', () => {
    const before = lines(50, 'a');
    const after = lines(50, 'b');
    const hunks = diffHunks(before, after, { maxEditDistance: 5 });
    expect(hunks).toHaveLength(1);
    expect(hunks[0]).toMatchObject({ oldStart: 1, oldLines: 50, newStart: 1, newLines: 50 });
    expect(applyHunks(before, hunks)).toBe(after);
  });

  it('property: applying the hunks to before gives after (minimal and fallback diffs)', () => {
    const text = fc
      .array(fc.constantFrom('a', 'b', 'c', 'd', ''), { maxLength: 30 })
      .chain((ls) => fc.boolean().map((eol) => ls.join('\n') + (eol && ls.length > 0 ? '\n' : '')));
    fc.assert(
      fc.property(text, text, fc.constantFrom(0, 1, 3), fc.constantFrom(2, 2000), (before, after, context, maxEditDistance) => {
        const hunks = diffHunks(before, after, { context, maxEditDistance });
        expect(applyHunks(before, hunks)).toBe(after);
        for (const hunk of hunks) {
          const body = hunk.lines.filter((l) => l !== NO_NEWLINE_MARKER);
          expect(body.filter((l) => l[0] !== '+').length).toBe(hunk.oldLines);
          expect(body.filter((l) => l[0] !== '-').length).toBe(hunk.newLines);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('property: the Myers diff is minimal on small inputs (matches an LCS count)', () => {
    const seq = fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 12 });
    fc.assert(
      fc.property(seq, seq, (a, b) => {
        const before = a.map((x) => `${x}\n`).join('');
        const after = b.map((x) => `${x}\n`).join('');
        const changed = diffHunks(before, after, { context: 0 }).reduce((n, h) => n + h.oldLines + h.newLines, 0);
        expect(changed).toBe(a.length + b.length - 2 * lcs(a, b));
      }),
      { numRuns: 300 },
    );
  });
});

function lcs(a: string[], b: string[]): number {
  const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) t[i][j] = a[i - 1] === b[j - 1] ? t[i - 1][j - 1] + 1 : Math.max(t[i - 1][j], t[i][j - 1]);
  return t[a.length][b.length];
}
