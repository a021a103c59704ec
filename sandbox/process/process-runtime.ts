/**
 * The `process` SandboxRuntime: isolates in a supervised pool of child
 * processes, so a V8 abort or a runaway program costs its run, never the host.
 * Each child hosts the in-process runtime; tools, hooks, events and
 * scheduling stay in this process, identical in both modes.
 */
import type {
  SandboxFailure,
  SandboxPoolStatus,
  SandboxRunOutcome,
  SandboxRunRequest,
  SandboxRuntime,
} from '../../src/sandbox-runtime.ts';
import { MiB } from '../memory-budget.ts';
import { resolveOptions, type ProcessRuntimeOptions, type ResolvedProcessRuntimeOptions } from './options.ts';
import { WaitQueue } from '../wait-queue.ts';
import type { SandboxChild } from './sandbox-child.ts';
import { Supervisor } from './supervisor.ts';

/** Sessions whose latest child the runtime remembers; the least recent is forgotten first. */
const MAX_REMEMBERED_SESSIONS = 4_096;

export type { ProcessRuntimeOptions } from './options.ts';

export interface SandboxProcessInfo {
  pid: number;
  ready: boolean;
  /** Runs in flight in this process. */
  runs: number;
}

export interface ProcessRuntime extends SandboxRuntime {
  readonly kind: 'process';
  /** The live child processes, for health checks and tests. */
  processes(): SandboxProcessInfo[];
}

/**
 * Starts the pool at once (`ready()` resolves when every child is up and its
 * warm pool filled). A child that crashes, stops answering, passes its RSS
 * ceiling or overruns a deadline by the grace is killed and replaced; its
 * runs fail `crashed` (`timeout` / `abort` for the run that overran). A child
 * whose run ended `timeout`, `memory` or `crashed` is retired: it takes no
 * new runs, is replaced at once and dies when its last run ends, because its
 * disposed isolate may still be running. `status().children` counts ready
 * children; `busy` counts runs in flight; `restarts` counts replacements.
 */
export function createProcessRuntime(options?: ProcessRuntimeOptions): ProcessRuntime {
  return createChildPoolRuntime(resolveOptions(options));
}

/** The pool behind the `process` runtime, over either transport (transport.ts). */
export function createChildPoolRuntime(resolved: ResolvedProcessRuntimeOptions): ProcessRuntime {
  const queue = new WaitQueue<SandboxChild>({
    limit: resolved.queueLimit,
    timeoutMs: resolved.queueTimeoutMs,
    shortage: () => supervisor.shortage,
    starting: () => supervisor.starting,
  });
  const supervisor = new Supervisor(resolved, () => queue.drain(() => supervisor.take()));
  let closed = false;
  let closing: Promise<void> | undefined;
  let admitted = 0;
  /**
   * The child that took each session's latest run: the session's next run goes there, since the
   * isolate it keeps for the session waits there (sessionIsolates), unless that child computes
   * more runs than the one the pool would pick (a burst still spreads over the children).
   */
  const sessionChildren = new Map<string, SandboxChild>();
  // Children keep isolates for sessions (their runtime's default) unless told `sessionIsolates: 0`; then nothing is routed.
  const routeSessions = resolved.sessionIsolates !== 0;
  const childFor = (sessionId: string | undefined): SandboxChild | undefined => {
    const picked = supervisor.take();
    const last = sessionId === undefined || !routeSessions ? undefined : sessionChildren.get(sessionId);
    return last !== undefined && last !== picked && last.hasRoom && (picked === undefined || last.activeRuns <= picked.activeRuns) ? last : picked;
  };
  const remember = (sessionId: string, child: SandboxChild): void => {
    sessionChildren.delete(sessionId);
    sessionChildren.set(sessionId, child);
    if (sessionChildren.size > MAX_REMEMBERED_SESSIONS) sessionChildren.delete(sessionChildren.keys().next().value as string);
  };

  const failed = (failure: SandboxFailure): SandboxRunOutcome => ({ ok: false, logs: [], failure });

  return {
    kind: 'process',

    run(request) {
      if (closed) return Promise.resolve(failed({ kind: 'busy', busy: 'closed', message: 'the sandbox runtime is closed; no process can take the run' }));
      if (request.signal.aborted) return Promise.resolve(failed({ kind: 'abort', message: 'the run was aborted before it started' }));
      return new Promise<SandboxRunOutcome>((resolve) => {
        const start = (child: SandboxChild) => {
          admitted++;
          if (routeSessions && request.sessionId !== undefined) remember(request.sessionId, child);
          resolve(child.run(request));
        };
        // Waiting runs go first: a free slot is theirs.
        const child = queue.size === 0 ? childFor(request.sessionId) : undefined;
        if (child) start(child);
        else queue.enter({ start, fail: (failure) => resolve(failed(failure)) }, request.signal);
      });
    },

    ready: () => supervisor.ready(),

    status(): SandboxPoolStatus {
      const saturated = queue.size > 0 || supervisor.take() === undefined;
      return {
        children: supervisor.readyCount,
        busy: supervisor.busy,
        queued: queue.size,
        restarts: supervisor.restarts,
        admitted,
        refused: queue.refused,
        memoryStopped: supervisor.memoryStopped,
        memoryBudgetBytes: resolved.memoryBudgetMiB * MiB,
        memoryUsedBytes: supervisor.chargedBytes,
        saturated,
        ...(saturated ? { saturatedBy: supervisor.shortage === 'compute' ? ('compute' as const) : ('memory' as const) } : {}),
        isolatesReused: supervisor.isolatesReused,
        keptIsolateBytes: supervisor.keptIsolateBytes,
      };
    },

    processes: () => supervisor.processes(),

    close() {
      if (!closing) {
        closed = true;
        queue.failAll({ kind: 'busy', busy: 'closed', message: 'the sandbox runtime closed before a process could take the run' });
        closing = supervisor.close('the sandbox runtime closed during the run; run it again');
      }
      return closing;
    },
  };
}
