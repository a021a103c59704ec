/**
 * Limits of the built-in workspace tools: every option with its default,
 * unit and what happens at the limit.
 */
export interface BuiltinToolLimits {
  /**
   * read: lines returned per call, in lines. Default 2,000. It is both the
   * page size when `limit` is omitted and the most a `limit` can ask for; the
   * render then says how many lines remain and which `offset` reads on.
   */
  readPageLines?: number;
  /**
   * read and grep: characters kept of one line. Default 2,000. A longer line
   * is cut there and ends with `… [line truncated: N characters]`, in the
   * value as in the render.
   */
  maxLineChars?: number;
  /**
   * write and edit: largest file, in bytes, before or after the change.
   * Default 10 MiB (10,485,760). Over it the call fails with `too-large`; the
   * value holds the whole before and after text, so this also bounds it.
   */
  maxEditBytes?: number;
  /** grep: files larger than this, in bytes, are skipped silently. Default 10 MiB. */
  maxGrepFileBytes?: number;
  /**
   * glob and grep: collection cap, in items (paths or matching lines).
   * Default 10,000. The walk stops once it is reached; the value holds every
   * collected item and the render says the cap was reached.
   */
  maxResults?: number;
  /**
   * glob and grep: items shown in the render, in items. Default 100. The
   * rest stay in the value (a run_code program sees them all); the render
   * ends with an "N more" note.
   */
  renderPageSize?: number;
  /**
   * grep and glob: longest pattern, in characters (UTF-16 code units),
   * applying to grep's `pattern` and `glob` and to glob's `pattern`. Default
   * 1,000. Over it the call fails (`TOOL_FAILED`, reason `invalid-argument`)
   * before anything is compiled.
   */
  maxPatternChars?: number;
  /**
   * grep and glob: deepest nesting of groups (regex) or of groups, extglobs
   * and braces (glob), in levels. Default 20. Over it the call fails
   * (`TOOL_FAILED`, reason `invalid-argument`) before anything is compiled:
   * V8's regexp compiler aborts the process on a few thousand levels, and
   * picomatch's compile time grows with about the cube of the nesting.
   */
  maxPatternDepth?: number;
  /**
   * grep and glob: time one call's search may run in its worker thread, in
   * ms (compiling, walking, reading and matching; not the wait for a free
   * worker or a thread's start-up). Default 20,000. Past it the worker is
   * terminated (which stops even a regex stuck backtracking) and the call
   * fails `TOOL_TIMEOUT`. The caller's signal (a run's end or timeoutMs, a
   * cancel) stops it the same way at any time, waiting included.
   */
  searchTimeoutMs?: number;
  /**
   * grep and glob: worker threads that do the matching, at most, in
   * threads. Default 2. Further calls wait for a free worker; the wait
   * counts against their deadline.
   */
  searchWorkers?: number;
  /**
   * grep and glob: heap of one search worker, in MiB. Default 256. A call
   * past it fails (`TOOL_FAILED`, reason `too-large`); the worker is
   * replaced and the host is unaffected.
   */
  searchWorkerHeapMiB?: number;
}

export type ResolvedLimits = Required<BuiltinToolLimits>;

export const DEFAULT_LIMITS: ResolvedLimits = Object.freeze({
  readPageLines: 2000,
  maxLineChars: 2000,
  maxEditBytes: 10 * 1024 * 1024,
  maxGrepFileBytes: 10 * 1024 * 1024,
  maxResults: 10_000,
  renderPageSize: 100,
  maxPatternChars: 1000,
  maxPatternDepth: 20,
  searchTimeoutMs: 20_000,
  searchWorkers: 2,
  searchWorkerHeapMiB: 256,
});

const MAX_TIMER_MS = 2_147_483_647;

export function resolveLimits(limits: BuiltinToolLimits = {}): ResolvedLimits {
  const out = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof ResolvedLimits)[]) {
    const value = limits[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1) {
      throw new RangeError(`limits.${key} must be a positive integer, got ${String(value)}`);
    }
    out[key] = value;
  }
  // A Node timer longer than this fires at once instead.
  if (out.searchTimeoutMs > MAX_TIMER_MS) {
    throw new RangeError(`limits.searchTimeoutMs must be at most ${MAX_TIMER_MS} ms, got ${out.searchTimeoutMs}`);
  }
  return out;
}
