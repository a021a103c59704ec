/**
 * Limits of the built-in workspace tools: every option with its unit and what
 * happens at the limit. Each default is written once, in `DEFAULT_LIMITS`, and
 * what each limit must be once, in `BUILTIN_TOOL_LIMITS_SCHEMA`; the
 * service's config file reads both.
 */
import { MAX_TIMEOUT_MS } from '../definition-rules.ts';
import { limitsCheck, limitsSchema } from '../schema/limit-rules.ts';

export interface BuiltinToolLimits {
  /**
   * read: lines returned per call, in lines. It is both the
   * page size when `limit` is omitted and the most a `limit` can ask for; the
   * render then says how many lines remain and which `offset` reads on.
   */
  readPageLines?: number;
  /**
   * read and grep: characters kept of one line. A longer line
   * is cut there and ends with `… [line truncated: N characters]`, in the
   * value as in the render.
   */
  maxLineChars?: number;
  /**
   * write and edit: largest file, in bytes, before or after the change.
   * Over it the call fails with `too-large`; the
   * value holds the whole before and after text, so this also bounds it.
   */
  maxEditBytes?: number;
  /**
   * write and edit: space, in MiB, the workspace's disk keeps free. A change
   * that would leave less fails (`TOOL_FAILED`, reason `no-space`), as one
   * does when the disk has almost no free inodes left: programs share the
   * disk with the session logs, which must still be written. 0 turns it off.
   */
  minFreeDiskMiB?: number;
  /** grep: files larger than this, in bytes, are skipped silently. */
  maxGrepFileBytes?: number;
  /**
   * glob and grep: collection cap, in items (paths or matching lines).
   * The walk stops once it is reached; the value holds every
   * collected item and the render says the cap was reached.
   */
  maxResults?: number;
  /**
   * glob and grep: items shown in the render, in items. The
   * rest stay in the value (a run_code program sees them all); the render
   * ends with an "N more" note.
   */
  renderPageSize?: number;
  /**
   * grep and glob: longest pattern, in characters (UTF-16 code units),
   * applying to grep's `pattern` and `glob` and to glob's `pattern`.
   * Over it the call fails (`TOOL_FAILED`, reason `invalid-argument`)
   * before anything is compiled.
   */
  maxPatternChars?: number;
  /**
   * grep and glob: deepest nesting of groups (regex) or of groups, extglobs
   * and braces (glob), in levels. Over it the call fails
   * (`TOOL_FAILED`, reason `invalid-argument`) before anything is compiled:
   * V8's regexp compiler aborts the process on a few thousand levels, and
   * picomatch's compile time grows with about the cube of the nesting.
   */
  maxPatternDepth?: number;
  /**
   * grep and glob: time one call's search may run in its worker thread, in
   * ms (compiling, walking, reading and matching; not the wait for a free
   * worker or a thread's start-up). Past it the worker is
   * terminated (which stops even a regex stuck backtracking) and the call
   * fails `TOOL_TIMEOUT`. The caller's signal (a run's end or timeoutMs, a
   * cancel) stops it the same way at any time, waiting included.
   */
  searchTimeoutMs?: number;
  /**
   * grep and glob: worker threads that do the matching, at most, in
   * threads. Further calls wait for a free worker; the wait
   * counts against their deadline.
   */
  searchWorkers?: number;
  /**
   * grep and glob: heap of one search worker, in MiB. A call
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
  minFreeDiskMiB: 256,
  maxGrepFileBytes: 10 * 1024 * 1024,
  maxResults: 10_000,
  renderPageSize: 100,
  maxPatternChars: 1000,
  maxPatternDepth: 20,
  searchTimeoutMs: 20_000,
  searchWorkers: 2,
  searchWorkerHeapMiB: 256,
});

/** Most search worker threads one host may ask for. */
const MAX_SEARCH_WORKERS = 64;

/**
 * What each limit must be, as JSON Schema: a whole number of at least 1; the search time one a
 * Node timer can wait (a longer one fires at once), the workers at most {@link MAX_SEARCH_WORKERS}.
 */
export const BUILTIN_TOOL_LIMITS_SCHEMA = limitsSchema(DEFAULT_LIMITS, {
  searchTimeoutMs: { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_MS },
  searchWorkers: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_WORKERS },
  minFreeDiskMiB: { type: 'integer', minimum: 0 },
});

const checkLimits = limitsCheck(BUILTIN_TOOL_LIMITS_SCHEMA);

/** Fills defaults and refuses values that cannot work, naming each. */
export function resolveLimits(limits: BuiltinToolLimits = {}): ResolvedLimits {
  const keys = Object.keys(DEFAULT_LIMITS) as (keyof ResolvedLimits)[];
  const resolved: ResolvedLimits = { ...DEFAULT_LIMITS, ...Object.fromEntries(keys.filter((key) => limits[key] !== undefined).map((key) => [key, limits[key]])) };
  const problems = checkLimits(resolved);
  if (problems.length > 0) throw new RangeError(`invalid built-in tool limits: ${problems.join('; ')}`);
  return resolved;
}
