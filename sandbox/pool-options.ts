/**
 * The options both runtimes' pools share (admission, the wait queue, warm and
 * kept isolates), and how their defaults (`DEFAULT_POOL`) are filled in;
 * those that depend on the machine are computed from it by `resolveAdmission`.
 */
import { availableParallelism } from 'node:os';
import { DEFAULT_POOL } from '../src/code-mode/pool-defaults.ts';
import { defaultMemoryBudgetMiB } from './memory-budget.ts';

/** How runs are admitted and queued; the same options in both runtimes (the process runtime splits them over its children). */
export interface AdmissionOptions {
  /**
   * Memory the runs may hold together, MiB. Default: half the memory available when the runtime
   * is created, at most half the machine's (or cgroup's) total, at least
   * `MIN_DEFAULT_MEMORY_BUDGET_MIB` (memory-budget.ts). A run is admitted
   * while its reservation fits; when runs outgrow it, the one that grew most fails `memory`.
   */
  memoryBudgetMiB?: number;
  /** What each run reserves at admission, before its isolate is measured, MiB. Default `DEFAULT_POOL.runReserveMiB`. */
  runReserveMiB?: number;
  /**
   * Runs that may be computing at once: a run counts until it awaits a nested call, and again
   * once the call has answered. Default `DEFAULT_POOL.activeRunsPerCore` per core
   * (`os.availableParallelism()`). Waiting runs cost no CPU; this bounds how many share the cores.
   */
  maxActiveRuns?: number;
  /** Runs allowed to wait for headroom (default `DEFAULT_POOL.queueLimit`); a run arriving when it is full fails `busy` at once; 0 never waits. */
  queueLimit?: number;
  /** How long the wait queue may stand still, ms (default `DEFAULT_POOL.queueTimeoutMs`); past it a run that waited that long fails `busy`. */
  queueTimeoutMs?: number;
}

export type ResolvedAdmission = Required<AdmissionOptions>;

/** Isolates made before they are needed, or kept after a run for the same session's next one. */
export interface IsolateReuseOptions {
  /**
   * Never-used isolates kept ready when idle. Default `DEFAULT_POOL.warmPoolSize`; 0 creates every
   * isolate on the request path. Under a burst the pool follows demand (see warm-pool.ts).
   */
  warmPoolSize?: number;
  /**
   * Heap of the warm isolates, MiB. Default `DEFAULT_POOL.warmPoolMemoryMiB`. A run asking for
   * another heap size gets a freshly made isolate (slower, same behaviour).
   */
  warmPoolMemoryMiB?: number;
  /**
   * Isolates kept for the next run of the same session, all sessions together. A run that ended
   * cleanly (its program settled, no tool call in flight, nothing scheduled for later by a
   * `FinalizationRegistry` or `Atomics.waitAsync`, heap in use under 1/16 of its limit and
   * 8 MiB, or a run handed big values whose heap stays under the sweep's bounds, see
   * sandbox/tuning.ts) leaves its isolate with a fresh context in it (the kept isolates hold at
   * most a quarter of the memory budget together); the session's next run skips the
   * isolate's constructor and disposal. Runs of different sessions never share an isolate, and
   * only runs whose caller named a session keep one: run_code called without a `sessionId`
   * (session `default`, every such caller's) always gets a fresh isolate.
   * Default `DEFAULT_POOL.sessionIsolates`; 0 disposes every isolate after its run.
   */
  sessionIsolates?: number;
  /** How long a kept isolate waits for its session's next run, ms. Default `DEFAULT_POOL.sessionIsolateIdleMs`. */
  sessionIsolateIdleMs?: number;
}

/** The admission options with their defaults filled in, and out-of-range values brought into range. */
export function resolveAdmission(options: AdmissionOptions, cores = availableParallelism()): ResolvedAdmission {
  return {
    memoryBudgetMiB: Math.max(1, options.memoryBudgetMiB ?? defaultMemoryBudgetMiB()),
    runReserveMiB: Math.max(0, options.runReserveMiB ?? DEFAULT_POOL.runReserveMiB),
    maxActiveRuns: Math.max(1, Math.floor(options.maxActiveRuns ?? DEFAULT_POOL.activeRunsPerCore * cores)),
    queueLimit: Math.max(0, Math.floor(options.queueLimit ?? DEFAULT_POOL.queueLimit)),
    queueTimeoutMs: options.queueTimeoutMs ?? DEFAULT_POOL.queueTimeoutMs,
  };
}
