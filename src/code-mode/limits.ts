/**
 * Code Mode limits: what one run_code program may use. SECURITY.md lists them
 * with what happens at each.
 */

export interface CodeModeLimits {
  /** Wall time of a run when it does not ask for one, ms, tool calls included. Default 30,000. Past it the isolate is disposed: kind `timeout`. */
  timeoutMs: number;
  /** Longest `timeoutMs` a run may ask for, ms. Default 600,000 (10 min); more is refused with `INVALID_ARGS`. */
  maxTimeoutMs: number;
  /** Isolate heap, MiB. Default 128. Past it the isolate is disposed: kind `memory`. */
  memoryMiB: number;
  /** Bytes of captured logs. Default 1 MiB (1,048,576). Past it one truncation marker is logged and later lines are dropped. */
  maxLogBytes: number;
  /** Bytes of the returned value's JSON. Default 16 MiB (16,777,216). Past it the run fails: kind `output-limit`. */
  maxResultBytes: number;
  /** Bytes (UTF-8) of one nested call's argument JSON. Default 4 MiB (4,194,304). Past it that call is refused with `INVALID_ARGS` (catchable; nothing is dispatched). */
  maxArgBytes: number;
  /** Bytes (UTF-8) of the result as rendered for the model (strings raw, other JSON pretty-printed). Default 1 MiB (1,048,576). Past it pretty-printing stops and the text ends with a truncation marker; the value is unchanged. */
  maxRenderedBytes: number;
  /** Nested tool calls per run. Default 1,000. The next call ends the run: kind `call-limit`. */
  maxCalls: number;
  /** Concurrency-safe nested calls in flight at once. Default 10. Further calls wait their turn. */
  maxParallelCalls: number;
  /** Bytes (UTF-8) of one nested call's value a paused run's journal may keep. Default 1 MiB (1,048,576). Past it the pause fails: kind `output-limit`. */
  maxJournalValueBytes: number;
}

export const DEFAULT_CODE_MODE_LIMITS: Readonly<CodeModeLimits> = Object.freeze({
  timeoutMs: 30_000,
  maxTimeoutMs: 600_000,
  memoryMiB: 128,
  maxLogBytes: 1024 * 1024,
  maxResultBytes: 16 * 1024 * 1024,
  maxArgBytes: 4 * 1024 * 1024,
  maxRenderedBytes: 1024 * 1024,
  maxCalls: 1_000,
  maxParallelCalls: 10,
  maxJournalValueBytes: 1024 * 1024,
});

/** Fills defaults and refuses values that cannot work, naming each. */
export function resolveLimits(partial: Partial<CodeModeLimits> = {}): CodeModeLimits {
  const limits = { ...DEFAULT_CODE_MODE_LIMITS, ...partial };
  const problems: string[] = [];
  for (const [key, value] of Object.entries(limits)) {
    if (!(typeof value === 'number' && Number.isInteger(value) && value > 0)) problems.push(`${key} must be a positive integer (got ${String(value)})`);
  }
  if (limits.memoryMiB < 8) problems.push('memoryMiB must be at least 8 (the isolate minimum)');
  if (limits.timeoutMs > limits.maxTimeoutMs) problems.push(`timeoutMs (${limits.timeoutMs}) must not exceed maxTimeoutMs (${limits.maxTimeoutMs})`);
  if (problems.length > 0) throw new RangeError(`invalid code mode limits: ${problems.join('; ')}`);
  return limits;
}
