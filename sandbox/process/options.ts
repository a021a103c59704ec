import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import type { TransportKind } from './transport.ts';
import { DEFAULT_PROCESS_POOL } from '../../src/code-mode/pool-defaults.ts';
import { resolveAdmission, type AdmissionOptions, type IsolateReuseOptions } from '../pool-options.ts';

/**
 * Options of the `process` runtime: isolates in a supervised pool of child processes. The
 * admission options bound all children together (each child gets an equal share); the isolate
 * reuse options apply to each child, whose runtime fills in the defaults (`DEFAULT_POOL`).
 */
export interface ProcessRuntimeOptions extends AdmissionOptions, IsolateReuseOptions {
  /**
   * Child processes kept running. Default `os.availableParallelism()`, min 1.
   * A crash costs the runs in one child only.
   */
  children?: number;
  /**
   * An optional hard cap on the runs one child hosts at once, on top of the
   * memory budget (which replaced it as the admission rule). Default: no cap.
   * A crash of a child fails at most this many runs.
   */
  runsPerChild?: number;
  /**
   * Isolates each child keeps for the next run of the same session. A session's run goes to the
   * child that ran its previous run, unless that child computes more runs than the least charged
   * one. Default `DEFAULT_POOL.sessionIsolates`; 0 disposes every isolate after its run, and
   * routes no session.
   */
  sessionIsolates?: number;
  /** How often the parent pings each child, ms. Default `DEFAULT_PROCESS_POOL.heartbeatIntervalMs`. */
  heartbeatIntervalMs?: number;
  /**
   * A child whose last answer is older than this, ms, is killed and replaced;
   * its runs fail `crashed`. Default `DEFAULT_PROCESS_POOL.heartbeatTimeoutMs`.
   * A starting child gets longer to load its runtime (sandbox-child.ts).
   */
  heartbeatTimeoutMs?: number;
  /**
   * Resident memory ceiling of one child, MiB, read at each heartbeat. Past it
   * the child is killed and replaced; its runs fail `crashed`. A backstop for
   * memory the budget does not see: default the child's share of
   * `memoryBudgetMiB` plus `DEFAULT_PROCESS_POOL.rssSlackMiB`.
   */
  rssLimitMiB?: number;
  /**
   * Runs one child serves before it is retired and replaced (its in-flight
   * runs finish first). Isolate churn grows a process's native memory in
   * steps that the JS heap does not show; recycling keeps it bounded well
   * below `rssLimitMiB`. Default `DEFAULT_PROCESS_POOL.recycleAfterRuns`; 0 never recycles.
   */
  recycleAfterRuns?: number;
  /**
   * Grace after a run's deadline or abort, ms, and after the IPC channel is
   * closed on close. A child that has not ended the run by deadline + grace
   * is SIGKILLed (the parent's wall clock is authoritative); on close,
   * SIGKILL follows after it. Default `DEFAULT_PROCESS_POOL.killGraceMs`.
   */
  killGraceMs?: number;
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
  const admission = resolveAdmission(options);
  const resolved: ResolvedProcessRuntimeOptions = {
    transport,
    children,
    ...admission,
    runsPerChild: options.runsPerChild === undefined ? Number.POSITIVE_INFINITY : Math.max(1, Math.floor(options.runsPerChild)),
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? DEFAULT_PROCESS_POOL.heartbeatIntervalMs,
    heartbeatTimeoutMs: options.heartbeatTimeoutMs ?? DEFAULT_PROCESS_POOL.heartbeatTimeoutMs,
    rssLimitMiB: options.rssLimitMiB ?? Math.ceil(admission.memoryBudgetMiB / children) + DEFAULT_PROCESS_POOL.rssSlackMiB,
    recycleAfterRuns: Math.max(0, Math.floor(options.recycleAfterRuns ?? DEFAULT_PROCESS_POOL.recycleAfterRuns)),
    killGraceMs: options.killGraceMs ?? DEFAULT_PROCESS_POOL.killGraceMs,
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
