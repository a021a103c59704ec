/**
 * Line diff as unified-diff hunks (JSON), for the replayable cards of write
 * and edit, on jsdiff's `structuredPatch`. Bounded: past `maxEditDistance`
 * changed lines, or `timeoutMs` of work, the card becomes one
 * delete-all/insert-all hunk, which is still a correct (if not minimal) diff.
 */
import { structuredPatch } from 'diff';

// A type alias (not an interface) so hunks are assignable to JsonValue.
export type DiffHunk = {
  /** 1-based first old line; for an empty old side, the line after which the new lines go (0 = start), as in `diff -u`. */
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** `' '` context, `'-'` removed, `'+'` added, each followed by the line text; `'\'` marks a missing final newline. */
  lines: string[];
};

/** Pushed after a line that has no trailing newline, as `diff -u` and git do. */
export const NO_NEWLINE_MARKER = '\\ No newline at end of file';

export interface DiffOptions {
  /** Unchanged lines around each change. Default 3. */
  context?: number;
  /** Largest edit distance (inserted + deleted lines) searched before falling back. Default 2,000. */
  maxEditDistance?: number;
  /** Longest search before falling back, ms. Default 500. */
  timeoutMs?: number;
}

export function diffHunks(before: string, after: string, options: DiffOptions = {}): DiffHunk[] {
  if (before === after) return [];
  const patch = structuredPatch('', '', before, after, undefined, undefined, {
    context: options.context ?? 3,
    maxEditLength: options.maxEditDistance ?? 2000,
    timeout: options.timeoutMs ?? 500,
  });
  if (patch === undefined) return [replaceAll(before, after)];
  // jsdiff numbers an empty side by the line it comes before; `diff -u` by the line it comes after.
  return patch.hunks.map((h) => ({
    oldStart: h.oldLines === 0 ? h.oldStart - 1 : h.oldStart,
    oldLines: h.oldLines,
    newStart: h.newLines === 0 ? h.newStart - 1 : h.newStart,
    newLines: h.newLines,
    lines: h.lines,
  }));
}

/** The fallback: every old line removed, every new line added, in one hunk. */
function replaceAll(before: string, after: string): DiffHunk {
  const side = (text: string, kind: '-' | '+'): string[] => {
    if (text === '') return [];
    const body = (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n').map((line) => kind + line);
    if (!text.endsWith('\n')) body.push(NO_NEWLINE_MARKER);
    return body;
  };
  const removed = side(before, '-');
  const added = side(after, '+');
  const count = (lines: string[]): number => lines.filter((line) => line !== NO_NEWLINE_MARKER).length;
  const oldLines = count(removed);
  const newLines = count(added);
  return { oldStart: oldLines === 0 ? 0 : 1, oldLines, newStart: newLines === 0 ? 0 : 1, newLines, lines: [...removed, ...added] };
}
