/**
 * The defaults of the built-in runtimes' pools (admission, the wait queue,
 * warm and kept isolates; the `process` runtime's children), each written
 * once: both runtimes (sandbox/), the service's `pool` config and its
 * descriptions read them. Plain data, so the library's entry can export it
 * without loading a sandbox.
 */
import { DEFAULT_CODE_MODE_LIMITS } from './limits.ts';

export const DEFAULT_POOL = Object.freeze({
  /** What one run reserves at admission, MiB: a little more than an isolate parked in a tool call holds (see sandbox/memory-budget.ts). */
  runReserveMiB: 2,
  /**
   * Runs that may be computing at once, per core. Generous: it bounds floods of computing runs,
   * while a burst of runs that will wait on tools must not queue behind it (each run counts until
   * it reaches its first call; a low cap refused much of a burst on a loaded machine).
   */
  activeRunsPerCore: 16,
  /** Runs that may wait for headroom. */
  queueLimit: 1_000,
  /** How long the wait queue may stand still, ms. */
  queueTimeoutMs: 5_000,
  /** Never-used isolates kept ready when idle. */
  warmPoolSize: 2,
  /** Heap of the warm isolates, MiB: the runs' own default, so a run that asks for none takes one. */
  warmPoolMemoryMiB: DEFAULT_CODE_MODE_LIMITS.memoryMiB,
  /** Isolates kept for sessions' next runs, all sessions together. */
  sessionIsolates: 16,
  /** How long a kept isolate waits for its session's next run, ms. */
  sessionIsolateIdleMs: 30_000,
  /** The in-process runtime's burst threads, by default one per core up to this: more add little preparation rate, and idle threads cost memory. */
  maxBurstThreads: 8,
});

/** The `process` runtime's own defaults: how it watches, bounds and recycles its children. */
export const DEFAULT_PROCESS_POOL = Object.freeze({
  /** How often the parent pings each child, ms. */
  heartbeatIntervalMs: 1_000,
  /** A child silent for this long, ms, is killed and replaced. */
  heartbeatTimeoutMs: 10_000,
  /** What a child's RSS ceiling allows past its share of the memory budget, MiB: the process's own baseline and native slack. */
  rssSlackMiB: 512,
  /** Runs one child serves before it is retired and replaced. */
  recycleAfterRuns: 10_000,
  /** Grace after a run's deadline or abort, and after the channel is closed on close, ms, before SIGKILL. */
  killGraceMs: 2_000,
});
