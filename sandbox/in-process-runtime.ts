/**
 * `createInProcessRuntime`: the `SandboxRuntime` that runs each program in a
 * fresh isolated-vm isolate in this process. The library default: fastest,
 * but a V8 abort takes the process with it (use the process runtime to
 * contain that). Runs are admitted against a memory budget (see
 * memory-budget.ts); past it they wait in a bounded queue, then fail `busy`.
 *
 * Under a burst, runs go to burst threads: worker threads of this process,
 * each hosting an in-process runtime of its own behind the sandbox-child
 * protocol (process/child-main.ts, over the thread transport). Preparing an
 * isolate is synchronous work of a few milliseconds; on this thread a
 * burst's isolates would be made one after another, while each thread makes
 * its own in parallel. Tools still run here: the threads relay the calls.
 */
import { availableParallelism } from 'node:os';
import { DEFAULT_POOL } from '../src/code-mode/pool-defaults.ts';
import type { SandboxFailure, SandboxPoolStatus, SandboxRunOutcome, SandboxRunRequest, SandboxRuntime } from '../src/sandbox-runtime.ts';
import type { CallReply } from './crossing/protocol.ts';
import { runInIsolate, type IsolateRunRequest, type RunControl } from './isolate-run.ts';
import { MemoryBudget, MiB, watchBudget, type BudgetTicket } from './memory-budget.ts';
import { resolveAdmission, type AdmissionOptions, type IsolateReuseOptions } from './pool-options.ts';
import { DEFAULT_FILENAME } from './reserved-names.ts';
import { SessionIsolates } from './session-isolates.ts';
import { SlowTools } from './slow-tools.ts';
import { stripProgram } from './strip-types.ts';
import { BURST_MIN_UNSTARTED, KEPT_BUDGET_SHARE, SYNC_RUNS_PER_CORE } from './tuning.ts';
import { resolveOptions } from './process/options.ts';
import { Supervisor } from './process/supervisor.ts';
import { WaitQueue } from './wait-queue.ts';
import { createWarmPool } from './warm-pool.ts';

/** The runtime's options; `DEFAULT_POOL` holds the defaults of those it shares with the process runtime. */
export interface InProcessRuntimeOptions extends AdmissionOptions, IsolateReuseOptions {
  /**
   * Worker threads that take the runs of a burst (a run that arrives while
   * more than 16 admitted runs have not started yet, or while runs queue): each
   * prepares its isolates in parallel with the others, and tools still run
   * on this thread. Started by the first burst or by `ready()`, kept until
   * `close()`; each holds memory (its modules, the type stripper, its
   * own warm pool). Default one per core (`os.availableParallelism()`), at
   * most `DEFAULT_POOL.maxBurstThreads`. 0: every run is prepared on this thread.
   */
  burstThreads?: number;
  /**
   * `queueTimeoutMs` counts from each run's arrival alone, not from the
   * queue's last start. Default false. The process runtime's children use it:
   * their parent bounds how long a run may take to start.
   */
  queueTimeoutFromArrival?: boolean;
  /**
   * Tool calls cross into the host synchronously: the guest blocks (`Atomics.wait` on memory it
   * shares with the host) for at most one host turn, then falls back to waiting asynchronously.
   * It saves two thread hops per call for tools that answer within the turn; a tool that misses
   * the turn (I/O), or answers more than the 16 KiB shared memory holds, has its later calls take
   * the asynchronous crossing at once, in this run and in runs started within a second
   * (`SlowTools`). Only runs that start while at most 4 runs per core are in flight use it: under
   * a burst the host's turns grow long, and a guest waiting out one holds an isolated-vm thread.
   * Default true.
   * Not isolated-vm's `applySyncPromise`: disposing an isolate while one waits frees state the
   * host promise still touches (test/sandbox/dispose-during-call.test.ts).
   */
  syncToolCalls?: boolean;
  /**
   * Each isolate is set up on isolated-vm's threads, not this one, except its constructor (isolated-vm
   * has no asynchronous one). This thread runs every tool and relays every call, so the time it
   * saves goes to calls (bench/RESULTS.md). The hops cost more CPU per isolate in all, so the runtime's burst threads and the process runtime's children, whose CPU
   * is the limit, prepare on their own thread. Default true.
   */
  prepareOffThread?: boolean;
}

/** The program `ready()` runs once, outside admission; see warmUp. */
const WARM_UP_PROGRAM = 'return 1;';
const WARM_UP_LIMITS = { timeoutMs: 5_000, maxLogBytes: 1024, maxResultBytes: 1024, maxArgBytes: 1024 };
const NEVER = new AbortController().signal;

/** A {@link SandboxRuntime} whose runs' calls may answer with text already made (a sandbox child's do). */
export interface InProcessRuntime extends SandboxRuntime {
  run(request: IsolateRunRequest): Promise<SandboxRunOutcome>;
}

export function createInProcessRuntime(options: InProcessRuntimeOptions = {}): InProcessRuntime {
  const poolMemoryMiB = options.warmPoolMemoryMiB ?? DEFAULT_POOL.warmPoolMemoryMiB;
  const offThread = options.prepareOffThread ?? true;
  const pool = createWarmPool(options.warmPoolSize ?? DEFAULT_POOL.warmPoolSize, poolMemoryMiB, offThread);
  const slowTools = new SlowTools();
  // Read once: each call asks the kernel for the process's CPU affinity.
  const cores = availableParallelism();
  const admission = resolveAdmission(options, cores);
  const budget = new MemoryBudget(admission.memoryBudgetMiB * MiB, admission.runReserveMiB * MiB);
  const keptLimit = Math.max(0, Math.floor(options.sessionIsolates ?? DEFAULT_POOL.sessionIsolates));
  const kept = new SessionIsolates({
    limit: keptLimit,
    maxBytes: budget.limitBytes * KEPT_BUDGET_SHARE,
    idleMs: options.sessionIsolateIdleMs ?? DEFAULT_POOL.sessionIsolateIdleMs,
    offThread,
  });
  const queue = new WaitQueue<true>({
    limit: admission.queueLimit,
    timeoutMs: admission.queueTimeoutMs,
    shortage: () => (activeRuns >= maxActive ? 'compute' : 'memory'),
    fromArrival: options.queueTimeoutFromArrival === true,
  });
  const maxActive = admission.maxActiveRuns;
  const syncRunLimit = SYNC_RUNS_PER_CORE * cores;
  /** Runs admitted and not waiting on a nested call. */
  let activeRuns = 0;
  const threadCount = Math.max(0, Math.floor(options.burstThreads ?? Math.min(cores, DEFAULT_POOL.maxBurstThreads)));
  let threads: Supervisor | undefined;
  /** The burst threads, started on first use. */
  const burstThreads = (): Supervisor | undefined => {
    if (threadCount === 0 || closed) return undefined;
    threads ??= new Supervisor(
      resolveOptions(
        {
          children: threadCount,
          // The threads admit what this runtime routes to them: its budget, split between them,
          // bounds their runs' growth; this runtime counts that growth when it admits (hasRoom).
          memoryBudgetMiB: budget.limitBytes / MiB,
          runReserveMiB: budget.reserveBytes / MiB,
          maxActiveRuns: maxActive,
          ...(options.warmPoolSize === undefined ? {} : { warmPoolSize: options.warmPoolSize }),
          ...(options.warmPoolMemoryMiB === undefined ? {} : { warmPoolMemoryMiB: options.warmPoolMemoryMiB }),
          ...(options.queueTimeoutMs === undefined ? {} : { queueTimeoutMs: options.queueTimeoutMs }),
          // A session's next run most likely starts here, not on the thread that ran its last one.
          sessionIsolates: 0,
        },
        'thread',
      ),
      // A thread with room takes the next run of a burst as it arrives; nothing waits for threads.
      () => undefined,
    );
    return threads;
  };
  const hasRoom = (): boolean => activeRuns < maxActive && budget.hasRoom(threads?.grownBytes ?? 0);
  const drain = (): void => queue.drain(() => (hasRoom() ? true : undefined));
  const stopWatch = watchBudget(budget);
  const active = new Set<Promise<SandboxRunOutcome>>();
  /** Admitted runs whose program has not started yet: more than BURST_MIN_UNSTARTED is a burst. */
  let unstarted = 0;
  let closed = false;

  const failed = (failure: SandboxFailure): SandboxRunOutcome => ({ ok: false, logs: [], failure });

  /**
   * One trivial program, once, before the runtime reports ready: the TypeScript stripper's
   * WebAssembly compiles, the bootstrap's code cache is made and this thread's JIT warms up
   * here instead of during the first burst (each burst thread and sandbox process has a runtime
   * of its own, and the first burst after a start used to pay for all of them at once).
   */
  let warmed: Promise<void> | undefined;
  const warmUp = (): Promise<void> =>
    (warmed ??= (async () => {
      const stripped = await stripProgram(WARM_UP_PROGRAM, DEFAULT_FILENAME);
      if (!stripped.ok || closed) return;
      const prepared = await pool.take(poolMemoryMiB);
      const request: SandboxRunRequest = {
        code: WARM_UP_PROGRAM,
        toolNames: [],
        limits: { ...WARM_UP_LIMITS, memoryMiB: poolMemoryMiB },
        signal: NEVER,
        callTool: () => Promise.resolve({ ok: false, error: { code: 'UNKNOWN_TOOL', message: 'no tools in the warm-up', callId: '' } }),
      };
      await runInIsolate(prepared, stripped.js, request);
      pool.refill();
    })().catch(() => undefined));

  /** Whether a run may be computing: it is not while one of its tool calls is in flight. */
  interface Activity {
    active: boolean;
    ended: boolean;
  }
  const setActive = (activity: Activity, active: boolean): void => {
    if (activity.ended || activity.active === active) return;
    activity.active = active;
    activeRuns += active ? 1 : -1;
    // The run now waits: its share of the cores is free for another.
    if (!active) drain();
  };

  const counted = (request: IsolateRunRequest, activity: Activity, onStart: () => void): IsolateRunRequest => {
    let inFlight = 0;
    return {
      ...request,
      onStart() {
        onStart();
        request.onStart?.();
      },
      // Not async (a microtask hop less per nested call); never throws, like the callTool it wraps.
      callTool: (name, argsJson, readsJson) => {
        if (inFlight++ === 0) setActive(activity, false);
        let pending: Promise<CallReply>;
        try {
          pending = request.callTool(name, argsJson, readsJson);
        } catch (error) {
          pending = Promise.reject(error);
        }
        const done = (): void => {
          if (--inFlight === 0) setActive(activity, true);
        };
        // Not `finally`: it costs two more promise hops than a plain `then`.
        return pending.then(
          (outcome) => {
            done();
            return outcome;
          },
          (error: unknown) => {
            done();
            throw error;
          },
        );
      },
    };
  };

  const runOnce = async (request: IsolateRunRequest, ticket: BudgetTicket): Promise<SandboxRunOutcome> => {
    // A burst is many runs not started yet, or runs waiting for admission: admitted one at a time as
    // others reach their first tool call, a burst's runs would each find the others gone.
    if (unstarted > BURST_MIN_UNSTARTED || queue.size > 0) {
      const thread = burstThreads()?.take();
      if (thread !== undefined) return thread.run(request);
    }
    const stripped = await stripProgram(request.code, request.filename ?? DEFAULT_FILENAME);
    if (!stripped.ok) return failed(stripped.failure);
    if (request.signal.aborted) return failed({ kind: 'abort', message: 'the run was cancelled before it started' });
    // Runs keep isolates only for a session, and only when the runtime keeps any: otherwise a run
    // starts and ends exactly as with no reuse at all (no wait here, no recycling at its end).
    const sessionId = keptLimit > 0 ? request.sessionId : undefined;
    let prepared = sessionId === undefined ? undefined : await kept.take(sessionId, request.limits.memoryMiB);
    try {
      prepared ??= await pool.take(request.limits.memoryMiB);
    } catch {
      return failed({ kind: 'crashed', message: 'the sandbox could not start an isolate; run the program again' });
    }
    const { isolate } = prepared;
    ticket.measure = async () => {
      const heap = await isolate.getHeapStatistics();
      return heap.total_physical_size + heap.externally_allocated_size;
    };
    // Under a burst the host's turns grow long, and a guest waiting out one holds an isolated-vm thread other runs need.
    const sync = (options.syncToolCalls ?? true) && active.size <= syncRunLimit;
    const control: RunControl = sync
      ? { syncCalls: true, slowTools: slowTools.current(), onSlowTool: (name) => slowTools.add(name), touched: () => budget.touch(ticket) }
      : { touched: () => budget.touch(ticket) };
    if (sessionId !== undefined) control.recycle = (ended) => void kept.offer(sessionId, ended);
    const outcome = runInIsolate(prepared, stripped.js, request, control);
    ticket.stop = control.stop;
    return outcome;
  };

  const start = (request: IsolateRunRequest): Promise<SandboxRunOutcome> => {
    const ticket = budget.admit();
    const activity: Activity = { active: true, ended: false };
    activeRuns++;
    unstarted++;
    let started = false;
    const onStart = (): void => {
      if (started) return;
      started = true;
      unstarted--;
    };
    const run = runOnce(counted(request, activity, onStart), ticket);
    active.add(run);
    void run.finally(() => {
      onStart();
      active.delete(run);
        setActive(activity, false);
      activity.ended = true;
      budget.release(ticket);
      drain();
      pool.refill();
    });
    return run;
  };

  return {
    kind: 'in-process',
    run(request) {
      if (closed) return Promise.resolve(failed({ kind: 'busy', busy: 'closed', message: 'the sandbox runtime is closed' }));
      // Waiting runs go first: headroom that frees is theirs.
      if (queue.size === 0 && hasRoom()) return start(request);
      // Short of headroom: the kept isolates' memory goes to the runs first.
      kept.clear();
      return new Promise((resolve) => {
        queue.enter({ start: () => resolve(start(request)), fail: (failure) => resolve(failed(failure)) }, request.signal);
      });
    },
    async ready() {
      // Threads that fail to start leave bursts to this thread: the runtime is ready without them.
      // And no ended run's isolate still being recycled: that work is the last run's, not the next one's.
      await Promise.all([warmUp().then(() => pool.filled()), burstThreads()?.ready().catch(() => undefined), kept.settled()]);
    },
    status(): SandboxPoolStatus {
      const saturated = queue.size > 0 || !hasRoom();
      return {
        children: threads?.readyCount ?? 0,
        busy: active.size,
        queued: queue.size,
        restarts: threads?.restarts ?? 0,
        admitted: budget.admitted,
        refused: queue.refused,
        memoryStopped: budget.stoppedRuns + (threads?.memoryStopped ?? 0),
        memoryBudgetBytes: budget.limitBytes,
        memoryUsedBytes: budget.usedBytes + (threads?.grownBytes ?? 0),
        saturated,
        ...(saturated ? { saturatedBy: activeRuns >= maxActive ? ('compute' as const) : ('memory' as const) } : {}),
        isolatesReused: kept.reused,
        keptIsolateBytes: kept.bytes,
      };
    },
    async close() {
      closed = true;
      stopWatch();
      queue.failAll({ kind: 'busy', busy: 'closed', message: 'the sandbox runtime closed before the run could start' });
      const poolClosed = pool.close();
      const keptClosed = kept.close();
      await Promise.allSettled([...active]);
      // Runs that ended meanwhile disposed their isolates at once; those being made or recycled are waited for.
      await Promise.all([poolClosed, keptClosed]);
      await threads?.close('the sandbox runtime closed during the run; run it again');
    },
  };
}
