/**
 * Line diff as unified-diff hunks (JSON), for the replayable cards of write
 * and edit. Myers' O((N+M)·D) algorithm on lines, after trimming the common
 * prefix and suffix. Bounded: when the edit distance or the work passes the
 * budget, the differing middle becomes one delete-all/insert-all block,
 * which is still a correct (if not minimal) diff.
 */

// A type alias (not an interface) so hunks are assignable to JsonValue.
export type DiffHunk = {
  /** 1-based first old line; for an empty old side, the line after which the new lines go (0 = start). */
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
  /** Largest number of diagonal and snake steps before falling back. Default 20,000,000. */
  maxWork?: number;
}

type OpKind = ' ' | '-' | '+';
interface Op {
  kind: OpKind;
  /** The line including its `\n` when it has one. */
  line: string;
}

export function diffHunks(before: string, after: string, options: DiffOptions = {}): DiffHunk[] {
  const ops = diffLines(splitLines(before), splitLines(after), options);
  return toHunks(ops, options.context ?? 3);
}

/** Lines keep their `\n`, so "a" and "a\n" differ (a changed final newline is a change). */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', start)) {
    lines.push(text.slice(start, i + 1));
    start = i + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

function diffLines(a: string[], b: string[], options: DiffOptions): Op[] {
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) {
    suffix++;
  }
  const midA = a.slice(prefix, a.length - suffix);
  const midB = b.slice(prefix, b.length - suffix);
  const middle =
    myers(midA, midB, options.maxEditDistance ?? 2000, options.maxWork ?? 20_000_000) ?? [
      ...midA.map((line): Op => ({ kind: '-', line })),
      ...midB.map((line): Op => ({ kind: '+', line })),
    ];
  const ops: Op[] = [];
  for (let i = 0; i < prefix; i++) ops.push({ kind: ' ', line: a[i] });
  ops.push(...middle);
  for (let i = a.length - suffix; i < a.length; i++) ops.push({ kind: ' ', line: a[i] });
  return ops;
}

/** Shortest edit script, or undefined when over budget. */
function myers(a: string[], b: string[], maxD: number, maxWork: number): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) {
    return [...a.map((line): Op => ({ kind: '-', line })), ...b.map((line): Op => ({ kind: '+', line }))];
  }
  const limit = Math.min(n + m, maxD);
  const off = limit + 1;
  const v = new Int32Array(2 * limit + 3);
  // trace[d] holds v for k in [-d-1, d+1] as it was before round d.
  const trace: Int32Array[] = [];
  let work = 0;
  let found = false;
  for (let d = 0; d <= limit && !found; d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
        work++;
      }
      v[off + k] = x;
      work++;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
    if (work > maxWork) return undefined;
  }
  if (!found) return undefined;

  const reversed: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const snap = trace[d];
    const at = (k: number): number => snap[k + d + 1];
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      reversed.push({ kind: ' ', line: a[x - 1] });
      x--;
      y--;
    }
    if (d > 0) {
      if (x === prevX) reversed.push({ kind: '+', line: b[--y] });
      else reversed.push({ kind: '-', line: a[--x] });
    }
  }
  return reversed.reverse();
}

function toHunks(ops: Op[], context: number): DiffHunk[] {
  // oldBefore[i] / newBefore[i]: old / new lines consumed before op i.
  const oldBefore = new Int32Array(ops.length + 1);
  const newBefore = new Int32Array(ops.length + 1);
  for (let i = 0; i < ops.length; i++) {
    oldBefore[i + 1] = oldBefore[i] + (ops[i].kind === '+' ? 0 : 1);
    newBefore[i + 1] = newBefore[i] + (ops[i].kind === '-' ? 0 : 1);
  }
  const hunks: DiffHunk[] = [];
  let next = 0;
  for (;;) {
    let change = next;
    while (change < ops.length && ops[change].kind === ' ') change++;
    if (change === ops.length) break;
    const start = Math.max(next, change - context);
    let end = change;
    let j = change;
    while (j < ops.length) {
      if (ops[j].kind !== ' ') {
        end = ++j;
        continue;
      }
      let run = j;
      while (run < ops.length && ops[run].kind === ' ') run++;
      if (run === ops.length || run - j > 2 * context) break;
      j = run;
    }
    const stop = Math.min(ops.length, end + context);
    const lines: string[] = [];
    for (let i = start; i < stop; i++) {
      const { kind, line } = ops[i];
      if (line.endsWith('\n')) lines.push(kind + line.slice(0, -1));
      else lines.push(kind + line, NO_NEWLINE_MARKER);
    }
    const oldLines = oldBefore[stop] - oldBefore[start];
    const newLines = newBefore[stop] - newBefore[start];
    hunks.push({
      oldStart: oldLines === 0 ? oldBefore[start] : oldBefore[start] + 1,
      oldLines,
      newStart: newLines === 0 ? newBefore[start] : newBefore[start] + 1,
      newLines,
      lines,
    });
    next = stop;
  }
  return hunks;
}

/** Applies hunks to `before` (the inverse check tests use; also handy for replaying a card). */
export function applyHunks(before: string, hunks: readonly DiffHunk[]): string {
  const a = splitLines(before);
  const out: string[] = [];
  let cursor = 0;
  for (const hunk of hunks) {
    const startIndex = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1;
    while (cursor < startIndex) out.push(a[cursor++]);
    for (let i = 0; i < hunk.lines.length; i++) {
      const entry = hunk.lines[i];
      if (entry === NO_NEWLINE_MARKER) continue;
      const eol = hunk.lines[i + 1] === NO_NEWLINE_MARKER ? '' : '\n';
      const kind = entry[0];
      const text = entry.slice(1) + eol;
      if (kind === '+') out.push(text);
      else {
        if (a[cursor] !== text) throw new Error(`hunk does not apply at old line ${cursor + 1}`);
        cursor++;
        if (kind === ' ') out.push(text);
      }
    }
  }
  while (cursor < a.length) out.push(a[cursor++]);
  return out.join('');
}
