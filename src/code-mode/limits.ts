/**
 * Code Mode limits: what one run_code program may use. SECURITY.md lists them
 * with what happens at each. Each default is written once, in
 * `DEFAULT_CODE_MODE_LIMITS`, and what each limit must be once, in
 * `CODE_MODE_LIMITS_SCHEMA`; the service's config file reads both.
 */
import { limitsCheck, limitsSchema } from '../schema/limit-rules.ts';

export interface CodeModeLimits {
  /** Wall time of a run when it does not ask for one, ms, tool calls included. Past it the isolate is disposed: kind `timeout`. */
  timeoutMs: number;
  /** Longest `timeoutMs` a run may ask for, ms; more is refused with `INVALID_ARGS`. */
  maxTimeoutMs: number;
  /** Isolate heap, MiB. Past it the isolate is disposed: kind `memory`. */
  memoryMiB: number;
  /** Bytes of captured logs. Past it one truncation marker is logged and later lines are dropped. */
  maxLogBytes: number;
  /** Bytes of the returned value's JSON. Past it the run fails: kind `output-limit`. */
  maxResultBytes: number;
  /** Bytes (UTF-8) of one nested call's argument JSON. Past it that call is refused with `INVALID_ARGS` (catchable; nothing is dispatched). */
  maxArgBytes: number;
  /** Bytes (UTF-8) of the result as rendered for the model (strings raw, other JSON pretty-printed). Past it pretty-printing stops and the text ends with a truncation marker; the value is unchanged. */
  maxRenderedBytes: number;
  /** Nested tool calls per run. The next call ends the run: kind `call-limit`. */
  maxCalls: number;
  /** Concurrency-safe nested calls in flight at once. Further calls wait their turn. */
  maxParallelCalls: number;
  /** Bytes (UTF-8) of one nested call's value a paused run's journal may keep. Past it the pause fails: kind `output-limit`. */
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

/** The smallest isolate heap isolated-vm accepts, MiB. */
export const MIN_MEMORY_MIB = 8;

/**
 * What each limit must be, as JSON Schema: a whole number of at least 1, the heap at least
 * {@link MIN_MEMORY_MIB}. {@link resolveLimits} checks against it, and the service's config
 * file builds its `limits` keys from it.
 */
export const CODE_MODE_LIMITS_SCHEMA = limitsSchema(DEFAULT_CODE_MODE_LIMITS, { memoryMiB: { type: 'integer', minimum: MIN_MEMORY_MIB } });

const checkLimits = limitsCheck(CODE_MODE_LIMITS_SCHEMA);

/** Fills defaults and refuses values that cannot work, naming each. */
export function resolveLimits(partial: Partial<CodeModeLimits> = {}): CodeModeLimits {
  const limits = { ...DEFAULT_CODE_MODE_LIMITS, ...partial };
  const problems = checkLimits(limits);
  if (limits.timeoutMs > limits.maxTimeoutMs) problems.push(`limits.timeoutMs (${limits.timeoutMs}) must not exceed limits.maxTimeoutMs (${limits.maxTimeoutMs})`);
  if (problems.length > 0) throw new RangeError(`invalid code mode limits: ${problems.join('; ')}`);
  return limits;
}
