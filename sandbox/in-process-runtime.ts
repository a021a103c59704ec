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
import type { SandboxFailure, SandboxPoolStatus, SandboxRunOutcome, SandboxRunRequest, SandboxRuntime } from '../src/sandbox-runtime.ts';
import type { CallReply } from './crossing/protocol.ts';
import { runInIsolate, type IsolateRunRequest, type RunControl } from './isolate-run.ts';
import { ACTIVE_RUNS_PER_CORE, DEFAULT_RUN_RESERVE_MIB, MemoryBudget, MiB, defaultMemoryBudgetMiB, watchBudget, type BudgetTicket } from './memory-budget.ts';
import { DEFAULT_FILENAME } from './reserved-names.ts';
import { SessionIsolates } from './session-isolates.ts';
import { SlowTools } from './slow-tools.ts';
import { stripProgram } from './strip-types.ts';
import { BURST_MIN_UNSTARTED, SYNC_RUNS_PER_CORE } from './tuning.ts';
import { resolveOptions } from './process/options.ts';
import { Supervisor } from './process/supervisor.ts';
import { DEFAULT_QUEUE, WaitQueue } from './wait-queue.ts';
import { createWarmPool } from './warm-pool.ts';

export interface InProcessRuntimeOptions {
  /**
   * Never-used isolates kept ready when idle. Default 2; 0 creates every
   * isolate on the request path. Under a burst the pool follows demand, up to
   * 16 times this (see warm-pool.ts).
   */
  warmPoolSize?: number;
  /**
   * Heap of the pooled isolates, MiB. Default 128. A run asking for another
   * heap size gets a freshly made isolate (slower, same behaviour).
   */
  warmPoolMemoryMiB?: number;
  /**
   * Memory the runs of this runtime may hold together, MiB. Default: half
   * the memory available when the runtime is created, at most half the
   * machine's (or cgroup's) total, at least 256. A run is admitted while its
   * reservation fits; when runs outgrow it, the one that grew most fails
   * `memory`.
   */
  memoryBudgetMiB?: number;
  /** What each run reserves at admission, before its isolate is measured, MiB. Default 2. */
  runReserveMiB?: number;
  /**
   * Runs admitted while they may be computing: a run counts until it awaits
   * a nested call, and again once the call has answered. Default 16 per core
   * (`os.availableParallelism()`). Waiting runs cost no CPU; this bounds how
   * many share the cores at once.
   */
  maxActiveRuns?: number;
  /**
   * Worker threads that take the runs of a burst (a run that arrives while
   * more than 16 admitted runs have not started yet, or while runs queue): each
   * prepares its isolates in parallel with the others, and tools still run
   * on this thread. Started by the first burst or by `ready()`, kept until
   * `close()`; each holds memory (its modules, the type stripper, its
   * own warm pool). Default one per core (`os.availableParallelism()`), at
   * most 8: more add little preparation rate, and idle threads
   * cost memory. 0: every run is prepared on this thread.
   */
  burstThreads?: number;
  /** Runs allowed to wait for headroom (default in `DEFAULT_QUEUE`); a run arriving when it is full fails `busy` at once; 0 never waits. */
  queueLimit?: number;
  /** How long the wait queue may stand still, ms (default in `DEFAULT_QUEUE`); past it a run that waited that long fails `busy`. */
  queueTimeoutMs?: number;
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
  /**
   * Isolates kept for the next run of the same session, all sessions together. A run that ended
   * cleanly (its program settled, no tool call in flight, nothing scheduled for later by a
   * `FinalizationRegistry` or `Atomics.waitAsync`, heap in use under 1/16 of its limit and
   * 8 MiB) leaves its isolate with a fresh context in it; the session's next run skips the
   * isolate's constructor and disposal (100 sequential calls, 8 runs at once: 1.3 to 1.7 times
   * the runs/s). Runs of different
   * sessions never share an isolate, and only runs whose caller named a session keep one:
   * run_code called without a `sessionId` (session `default`, every such caller's) always gets a
   * fresh isolate. Default 16; 0 disposes every isolate after its run.
   */
  sessionIsolates?: number;
  /** How long a kept isolate waits for its session's next run, ms. Default 30,000. */
  sessionIsolateIdleMs?: number;
}

/** The default `burstThreads` on a machine with more cores than this. */
const MAX_DEFAULT_BURST_THREADS = 8;

const DEFAULT_SESSION_ISOLATES = 16;
const DEFAULT_SESSION_ISOLATE_IDLE_MS = 30_000;


/** The program `ready()` runs once, outside admission; see warmUp. */
const WARM_UP_PROGRAM = 'return 1;';
const WARM_UP_LIMITS = { timeoutMs: 5_000, maxLogBytes: 1024, maxResultBytes: 1024, maxArgBytes: 1024 };
const NEVER = new AbortController().signal;

/** A {@link SandboxRuntime} whose runs' calls may answer with text already made (a sandbox child's do). */
export interface InProcessRuntime extends SandboxRuntime {
  run(request: IsolateRunRequest): Promise<SandboxRunOutcome>;
}

export function createInProcessRuntime(options: InProcessRuntimeOptions = {}): InProcessRuntime {
  const poolMemoryMiB = options.warmPoolMemoryMiB ?? 128;
  const offThread = options.prepareOffThread ?? true;
  const pool = createWarmPool(options.warmPoolSize ?? 2, poolMemoryMiB, offThread);
  const keptLimit = Math.max(0, Math.floor(options.sessionIsolates ?? DEFAULT_SESSION_ISOLATES));
  const kept = new SessionIsolates({
    limit: keptLimit,
    idleMs: options.sessionIsolateIdleMs ?? DEFAULT_SESSION_ISOLATE_IDLE_MS,
    offThread,
  });
  const slowTools = new SlowTools();
  const budget = new MemoryBudget(
    Math.max(1, options.memoryBudgetMiB ?? defaultMemoryBudgetMiB()) * MiB,
    Math.max(0, options.runReserveMiB ?? DEFAULT_RUN_RESERVE_MIB) * MiB,
  );
  const queue = new WaitQueue<true>({
    limit: Math.max(0, Math.floor(options.queueLimit ?? DEFAULT_QUEUE.queueLimit)),
    timeoutMs: options.queueTimeoutMs ?? DEFAULT_QUEUE.queueTimeoutMs,
    shortage: () => (activeRuns >= maxActive ? 'compute' : 'memory'),
    fromArrival: options.queueTimeoutFromArrival === true,
  });
  // Read once: each call asks the kernel for the process's CPU affinity.
  const cores = availableParallelism();
  const maxActive = Math.max(1, Math.floor(options.maxActiveRuns ?? ACTIVE_RUNS_PER_CORE * cores));
  const syncRunLimit = SYNC_RUNS_PER_CORE * cores;
  /** Runs admitted and not waiting on a nested call. */
  let activeRuns = 0;
  const threadCount = Math.max(0, Math.floor(options.burstThreads ?? Math.min(cores, MAX_DEFAULT_BURST_THREADS)));
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
