import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import type { TransportKind } from './transport.ts';
import { ACTIVE_RUNS_PER_CORE, DEFAULT_RUN_RESERVE_MIB, defaultMemoryBudgetMiB } from '../memory-budget.ts';

/** Options of the `process` runtime: isolates in a supervised pool of child processes. */
export interface ProcessRuntimeOptions {
  /**
   * Child processes kept running. Default `os.availableParallelism()`, min 1.
   * A crash costs the runs in one child only.
   */
  children?: number;
  /**
   * Memory the runs of all children may hold together, MiB; each child gets
   * an equal share. Default: half the memory available when the runtime is
   * created, at most half the machine's (or cgroup's) total, at least 256.
   * A run goes to the child with the most headroom for its reservation, or
   * waits in the queue; when a child's runs outgrow its share, the run that
   * grew most fails `memory` (see sandbox/memory-budget.ts).
   */
  memoryBudgetMiB?: number;
  /** What each run reserves at admission, before its isolate is measured, MiB. Default 2. */
  runReserveMiB?: number;
  /**
   * Runs that may be computing at once, over all children (each gets an equal
   * share, at least 1): a run counts until it awaits a nested call, and again
   * once the call has answered. Default 16 per core
   * (`os.availableParallelism()`). Runs that wait on tools cost no CPU, so
   * this bounds CPU contention, not waiting runs: more computing runs than
   * that only share the cores worse (measured: 16 trivial runs at once on 2
   * cores cost ~25 % more CPU each than 8).
   */
  maxActiveRuns?: number;
  /**
   * An optional hard cap on the runs one child hosts at once, on top of the
   * memory budget (which replaced it as the admission rule). Default: no cap.
   * A crash of a child fails at most this many runs.
   */
  runsPerChild?: number;
  /** Never-used isolates each child keeps warm. Default: the in-process runtime's (2). */
  warmPoolSize?: number;
  /**
   * Heap of the warm isolates, MiB. Default: the in-process runtime's (128).
   * A run asking for another heap gets a freshly made isolate (slower).
   */
  warmPoolMemoryMiB?: number;
  /**
   * Isolates each child keeps for the next run of the same session (see the in-process runtime's
   * option of that name). A session's run goes to the child that ran its previous run, unless
   * that child computes more runs than the least charged one. Default: the in-process runtime's
   * (16); 0 disposes every isolate after its run, and routes no session.
   */
  sessionIsolates?: number;
  /** How long a kept isolate waits for its session's next run, ms. Default: the in-process runtime's (30,000). */
  sessionIsolateIdleMs?: number;
  /** How often the parent pings each child, ms. Default 1,000. */
  heartbeatIntervalMs?: number;
  /**
   * A child whose last answer is older than this, ms, is killed and replaced;
   * its runs fail `crashed`. Default 10,000. A starting child gets at least
   * 30,000 ms to load its runtime.
   */
  heartbeatTimeoutMs?: number;
  /**
   * Resident memory ceiling of one child, MiB, read at each heartbeat. Past it
   * the child is killed and replaced; its runs fail `crashed`. A backstop for
   * memory the budget does not see: default the child's share of
   * `memoryBudgetMiB` plus 512 (the process's own baseline and native slack).
   */
  rssLimitMiB?: number;
  /**
   * Runs one child serves before it is retired and replaced (its in-flight
   * runs finish first). Isolate churn grows a process's native memory in
   * steps that the JS heap does not show; recycling keeps it bounded well
   * below `rssLimitMiB`. Default 10,000; 0 never recycles.
   */
  recycleAfterRuns?: number;
  /**
   * Grace after a run's deadline or abort, ms, and after the IPC channel is
   * closed on close. A child that has not ended the run by deadline + grace
   * is SIGKILLed (the parent's wall clock is authoritative); on close,
   * SIGKILL follows after it. Default 2,000.
   */
  killGraceMs?: number;
  /**
   * Runs allowed to wait for headroom. Default 1,000 (a burst of runs that
   * will soon wait on tools queues while each reaches its first call). A run
   * arriving when the queue is full fails `busy` at once; 0 means never wait.
   */
  queueLimit?: number;
  /** How long the wait queue may stand still, ms (wait-queue.ts). Default 5,000; past it a run that waited that long fails `busy`. */
  queueTimeoutMs?: number;
  /**
   * Extra Node flags for the children (they always get `--no-node-snapshot`,
   * which isolated-vm needs). Default none.
   */
  execArgv?: readonly string[];
  /**
   * URL of the module whose `createInProcessRuntime` each child hosts.
   * Default: the sibling `sandbox/in-process-runtime`. Meant for tests.
   */
  runtimeModule?: string;
}

/** Options the children's runtimes default themselves when not given. */
type ChildDefaulted = 'warmPoolSize' | 'warmPoolMemoryMiB' | 'sessionIsolates' | 'sessionIsolateIdleMs';

export type ResolvedProcessRuntimeOptions = Required<Omit<ProcessRuntimeOptions, ChildDefaulted>> &
  Pick<ProcessRuntimeOptions, ChildDefaulted> & {
    /** What the children are: processes (the `process` runtime) or threads (the in-process runtime's burst threads). */
    transport: TransportKind;
  };

// Built to dist/, the siblings are .js files; run from source, .ts.
const ownExtension = extname(new URL(import.meta.url).pathname);

/** The child entry, resolved next to this file. */
export const childEntry = new URL(`./child-main${ownExtension}`, import.meta.url);

export function resolveOptions(options: ProcessRuntimeOptions = {}, transport: TransportKind = 'process'): ResolvedProcessRuntimeOptions {
  const children = Math.max(1, Math.floor(options.children ?? availableParallelism()));
  const memoryBudgetMiB = Math.max(1, options.memoryBudgetMiB ?? defaultMemoryBudgetMiB());
  const resolved: ResolvedProcessRuntimeOptions = {
    transport,
    children,
    memoryBudgetMiB,
    runReserveMiB: Math.max(0, options.runReserveMiB ?? DEFAULT_RUN_RESERVE_MIB),
    maxActiveRuns: Math.max(1, Math.floor(options.maxActiveRuns ?? ACTIVE_RUNS_PER_CORE * availableParallelism())),
    runsPerChild: options.runsPerChild === undefined ? Number.POSITIVE_INFINITY : Math.max(1, Math.floor(options.runsPerChild)),
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 1_000,
    heartbeatTimeoutMs: options.heartbeatTimeoutMs ?? 10_000,
    rssLimitMiB: options.rssLimitMiB ?? Math.ceil(memoryBudgetMiB / children) + 512,
    recycleAfterRuns: Math.max(0, Math.floor(options.recycleAfterRuns ?? 10_000)),
    killGraceMs: options.killGraceMs ?? 2_000,
    queueLimit: Math.max(0, Math.floor(options.queueLimit ?? 1_000)),
    queueTimeoutMs: options.queueTimeoutMs ?? 5_000,
    execArgv: options.execArgv ?? [],
    runtimeModule: options.runtimeModule ?? new URL(`../in-process-runtime${ownExtension}`, import.meta.url).href,
  };
  if (options.warmPoolSize !== undefined) resolved.warmPoolSize = options.warmPoolSize;
  if (options.warmPoolMemoryMiB !== undefined) resolved.warmPoolMemoryMiB = options.warmPoolMemoryMiB;
  if (options.sessionIsolates !== undefined) resolved.sessionIsolates = options.sessionIsolates;
  if (options.sessionIsolateIdleMs !== undefined) resolved.sessionIsolateIdleMs = options.sessionIsolateIdleMs;
  return resolved;
}

/** One child's share of the computing runs. */
export function activeRunsPerChild(options: ResolvedProcessRuntimeOptions): number {
  return Math.max(1, Math.ceil(options.maxActiveRuns / options.children));
}

/** One child's share of the memory budget, MiB. */
export function childBudgetMiB(options: ResolvedProcessRuntimeOptions): number {
  return options.memoryBudgetMiB / options.children;
}
