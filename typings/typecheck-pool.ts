/**
 * The type-checker off the event loop: a small pool of warm worker threads
 * (typecheck-worker.ts), each under a heap limit, each check under a time
 * budget and the run's abort signal. The TypeScript checker cannot be
 * interrupted from inside, so a check over its budget ends with its thread:
 * the thread is terminated and a fresh one started in its place. A check that
 * did not complete rejects with {@link TypecheckIncompleteError}; it never
 * resolves as clean.
 *
 * Checks wait their turn by tenant, then by run (src/fair-queue.ts), and no
 * run or tenant takes the last free worker while it holds all the others.
 *
 * Checks that queue while the workers are busy go to a worker together, up
 * to 16 in one request, and share one program's fixed cost (typecheck.ts):
 * under load a short program costs a fraction of its check alone. When a
 * shared request fails (a crash, the heap budget, a check past its time),
 * which program did it is unknown: the others are checked again, each alone,
 * so a hostile program fails only itself (and costs the others a retry).
 *
 * Memory is watched from here, not left to the worker's `resourceLimits`
 * alone: when a worker reaches its V8 heap limit, Node terminates it only on a
 * best effort, and a checker that allocates fast enough aborts the whole
 * process instead ("Reached heap limit", nodejs/node#47224, seen here with the
 * hostile tuple-union program at 128 MiB). So while a check runs, its worker's
 * heap is polled and the worker terminated past `heapMiB`; the V8 limit sits at
 * twice that, a backstop far above anything the poll lets through.
 */
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { TypecheckDiagnostic } from '../src/code-mode/typings-service.ts';
import { FairQueue, type QueueKeys, type QueueOwner, type TenantOfSession } from '../src/fair-queue.ts';
import { LruCache } from './lru.ts';
import type { TypecheckerOptions } from './typecheck.ts';
import type { CheckRequest, TypecheckWorkerData, WorkerMessage } from './typecheck-protocol.ts';

export interface TypecheckPoolOptions extends TypecheckerOptions {
  /** Worker threads, each a warm checker (~60 MiB). Default: one less than `os.availableParallelism()`, from 1 to `MAX_DEFAULT_TYPECHECK_THREADS`. */
  threads?: number;
  /**
   * Heap budget of each worker, MiB: a check whose worker's heap in use (garbage not yet
   * collected included) passes it fails `memory` and its worker is replaced. Polled every
   * `HEAP_POLL_MS` while a check runs; V8's own limit for the worker is twice this. Default
   * `DEFAULT_TYPECHECK_HEAP_MIB`.
   */
  heapMiB?: number;
  /**
   * Longest one check may run on a worker, ms. Default `DEFAULT_TYPECHECK_TIMEOUT_MS`. The run's share of its own
   * `timeoutMs` bounds the whole wait too, waiting for a free or starting worker included.
   */
  timeoutMs?: number;
  /** The tenant of a session, so that tenants take turns before runs do (src/fair-queue.ts). Default: no tenants. */
  tenantOf?: TenantOfSession;
}

export interface CheckBudget {
  /** The check's share of the run's time, ms, from the request on; the pool's `timeoutMs` caps the time on a worker. Default: the pool's `timeoutMs`. */
  timeoutMs?: number;
  /** The run's signal: aborting it ends the check (and its worker). */
  signal?: AbortSignal;
  /** Whose turn the check waits for; a check without one is a run of its own. */
  owner?: QueueOwner;
}

export type TypecheckIncompleteReason = 'timeout' | 'memory' | 'crashed' | 'aborted' | 'unavailable';

/** The check did not complete; the program is unchecked. The message is written for the model. */
export class TypecheckIncompleteError extends Error {
  override name = 'TypecheckIncompleteError';
  readonly reason: TypecheckIncompleteReason;
  constructor(reason: TypecheckIncompleteReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface TypecheckPool {
  /** Diagnostics of `code` against `typings`; rejects with {@link TypecheckIncompleteError}. */
  check(code: string, typings: string, budget?: CheckBudget): Promise<TypecheckDiagnostic[]>;
  /** Starts every thread now, so the first check does not pay for loading the compiler. */
  warm(): void;
  /** Threads started so far, replacements included (a figure for tests and metrics). */
  readonly started: number;
  /** Requests sent to the threads so far: fewer than the checks when checks shared requests. */
  readonly requests: number;
  /** Terminates every thread; pending checks reject `unavailable`. */
  close(): Promise<void>;
}

export const DEFAULT_TYPECHECK_HEAP_MIB = 512;
export const DEFAULT_TYPECHECK_TIMEOUT_MS = 10_000;
/** How often a running check's heap is measured, ms. */
const HEAP_POLL_MS = 100;

/** The most checker threads the default starts: a warm check of a short program is quick. */
export const MAX_DEFAULT_TYPECHECK_THREADS = 4;

/** One less than the cores (the event loop keeps one), at least 1 and at most {@link MAX_DEFAULT_TYPECHECK_THREADS}. */
export function defaultTypecheckThreads(): number {
  return Math.max(1, Math.min(MAX_DEFAULT_TYPECHECK_THREADS, availableParallelism() - 1));
}

// From source this file is typecheck-pool.ts and starts typecheck-worker.ts (Node strips its
// types); built to dist/ it is typecheck-pool.js and starts the compiled typecheck-worker.js.
const WORKER_URL = new URL(`./typecheck-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/**
 * Programs checked together at most when checks queue: they share one program's fixed cost
 * (typecheck.ts), which is most of a short program's check.
 */
const MAX_BATCH = 16;

const SIMPLIFY = 'simplify the program (very deep nesting; huge unions, mapped or template-literal types over many members) and run it again';

interface Job {
  keys: QueueKeys;
  code: string;
  typings: string;
  typingsVersion: number;
  /** The run's share, ms, counted from the request: waiting for a worker spends it too. */
  budgetMs: number;
  submittedAt: number;
  timer: NodeJS.Timeout | undefined;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  /** The worker checking it; unset while it waits, and once it has left its request (aborted). */
  slot: Slot | undefined;
  /** Checked on its own: a request it shared failed, and which program made it fail is unknown. */
  alone: boolean;
  resolve(diagnostics: TypecheckDiagnostic[]): void;
  reject(error: TypecheckIncompleteError): void;
}

interface Slot {
  index: number;
  worker: Worker;
  ready: boolean;
  /** The jobs of the request on this worker, in the request's order; empty when idle. */
  batch: Job[];
  /** Whose jobs hold this worker (the queue's count), released once when the request ends. */
  held: QueueKeys[];
  requestId: number;
  /** Measures the worker's heap while a request runs on it. */
  heapPoll: NodeJS.Timeout | undefined;
  /** The typings version this worker holds; -1 before the first. */
  typingsVersion: number;
}

export function createTypecheckPool(options: TypecheckPoolOptions = {}): TypecheckPool {
  const threads = Math.max(1, Math.floor(options.threads ?? defaultTypecheckThreads()));
  const heapMiB = options.heapMiB ?? DEFAULT_TYPECHECK_HEAP_MIB;
  const heapBytes = heapMiB * 1024 * 1024;
  const maxMs = options.timeoutMs ?? DEFAULT_TYPECHECK_TIMEOUT_MS;
  const workerData: TypecheckWorkerData = {
    checker: {
      ...(options.maxDiagnostics === undefined ? {} : { maxDiagnostics: options.maxDiagnostics }),
      ...(options.maxMessageLength === undefined ? {} : { maxMessageLength: options.maxMessageLength }),
    },
  };
  const slots: (Slot | undefined)[] = new Array(threads).fill(undefined);
  /** Slots whose last worker died before it was ready: not restarted until a check needs one. */
  const bootFailed = new Set<number>();
  const queue = new FairQueue<Job>(options.tenantOf);
  // Typings are sent to a worker once per version, not with every check; a version is a
  // number per distinct text (the service hands out the same cached string each time).
  const versions = new LruCache<string, number>(16);
  let nextVersion = 0;
  let nextRequestId = 0;
  let started = 0;
  let warmed = false;
  let closed = false;

  const outOfMemory = () => new TypecheckIncompleteError('memory', `the type-check ran out of its ${heapMiB} MiB memory budget; ${SIMPLIFY}`);
  const crashed = (detail?: string) =>
    new TypecheckIncompleteError('crashed', `the type-checker failed on this program${detail === undefined ? '' : ` (${detail})`}; ${SIMPLIFY}`);

  function versionOf(typings: string): number {
    let version = versions.get(typings);
    if (version === undefined) {
      version = nextVersion++;
      versions.set(typings, version);
    }
    return version;
  }

  function spawn(index: number): void {
    started++;
    const worker = new Worker(WORKER_URL, {
      workerData,
      // Node's own flags of this process (--no-node-snapshot, a test runner's loader …) are not all valid in a worker.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: heapMiB * 2 },
    });
    // An idle checker never keeps the process alive.
    worker.unref();
    const slot: Slot = { index, worker, ready: false, batch: [], held: [], requestId: -1, heapPoll: undefined, typingsVersion: -1 };
    slots[index] = slot;
    worker.on('message', (message: WorkerMessage) => onMessage(slot, message));
    worker.on('error', (error: Error & { code?: string }) => {
      const outOfMemory = error.code === 'ERR_WORKER_OUT_OF_MEMORY';
      lost(slot, outOfMemory ? 'memory' : 'crashed', outOfMemory ? undefined : `${error.name}: ${error.message}`);
    });
    worker.on('exit', () => lost(slot, 'crashed', 'the checker thread exited'));
  }

  /** The jobs `slot` still checks for (an aborted one has left); the slot is idle afterwards. */
  function endRequest(slot: Slot): Job[] {
    clearInterval(slot.heapPoll);
    const jobs = slot.batch.filter((job) => job.slot === slot);
    slot.batch = [];
    queue.holding(slot.held, -1);
    slot.held = [];
    return jobs;
  }

  /** Ends `slot`'s worker (a check cannot be interrupted otherwise); returns the jobs it was checking. */
  function dropWorker(slot: Slot): Job[] {
    slots[slot.index] = undefined;
    void slot.worker.terminate();
    return endRequest(slot);
  }

  /** Back to the head of the queue, each to be checked on its own. */
  function requeueAlone(jobs: Job[]): void {
    for (const job of jobs) {
      job.slot = undefined;
      job.alone = true;
    }
    queue.unshift(jobs, (job) => job.keys);
  }

  /**
   * `slot`'s request failed as a whole. A program checked alone fails with `error`; programs that
   * shared the request (with each other, or with one cancelled since) are checked again, each
   * alone: which one made it fail is unknown. The worker goes, unless `keepWorker` (the checker
   * threw, and the thread is sound).
   */
  function failRequest(slot: Slot, error: () => TypecheckIncompleteError, keepWorker = false): void {
    const shared = slot.batch.length > 1;
    const jobs = keepWorker ? endRequest(slot) : dropWorker(slot);
    if (shared) requeueAlone(jobs);
    else {
      for (const job of jobs) {
        settle(job);
        job.reject(error());
      }
    }
  }

  function onMessage(slot: Slot, message: WorkerMessage): void {
    if (slots[slot.index] !== slot) return;
    if (message.type === 'ready') {
      slot.ready = true;
      bootFailed.delete(slot.index);
      pump();
      return;
    }
    if (message.id !== slot.requestId || slot.batch.length === 0) return;
    if (message.type === 'failed') failRequest(slot, () => crashed(message.error), true);
    else {
      const batch = slot.batch;
      endRequest(slot);
      batch.forEach((job, at) => {
        // One cancelled meanwhile has left the request.
        if (job.slot !== slot) return;
        settle(job);
        job.resolve(message.diagnostics[at]);
      });
    }
    pump();
  }

  /** A worker died (heap limit, a crash, an exit): its checks fail or go again, and a fresh worker takes its place. */
  function lost(slot: Slot, reason: 'memory' | 'crashed', detail: string | undefined): void {
    if (slots[slot.index] !== slot) return;
    if (slot.batch.length > 0) failRequest(slot, () => (reason === 'memory' ? outOfMemory() : crashed()));
    else {
      dropWorker(slot);
      if (!slot.ready) {
        // It died while starting (a missing build, say). With no other worker alive or starting,
        // what waits would wait out its whole budget for nothing: it fails now.
        bootFailed.add(slot.index);
        const othersAlive = slots.some((other) => other !== undefined);
        for (const waiting of othersAlive ? [] : queue.drain()) {
          settle(waiting);
          waiting.reject(new TypecheckIncompleteError('unavailable', 'the type-checker could not start; the service log says why'));
        }
        process.emitWarning(`typecheck worker failed to start: ${detail ?? reason}`, 'PtcTypecheckWarning');
      }
    }
    pump();
  }

  /** Ends a job's timer and abort listener; the job leaves the queue if it waited there. */
  function settle(job: Job): void {
    clearTimeout(job.timer);
    job.signal?.removeEventListener('abort', job.onAbort);
    queue.remove(job);
  }

  /**
   * The budget ran out or the run was cancelled. A check alone on its worker takes the worker with
   * it. One that shares its request leaves it when cancelled; past its budget it may be the check
   * that is stuck, so the worker goes and the others are checked again, each alone.
   */
  function stop(job: Job, error: TypecheckIncompleteError): void {
    settle(job);
    const slot = job.slot;
    job.slot = undefined;
    if (slot !== undefined && slots[slot.index] === slot) {
      const others = slot.batch.filter((other) => other.slot === slot);
      if (others.length === 0) dropWorker(slot);
      else if (error.reason !== 'aborted') requeueAlone(dropWorker(slot));
    }
    job.reject(error);
    pump();
  }

  function measure(slot: Slot, requestId: number): void {
    slot.worker.getHeapStatistics().then(
      (heap) => {
        if (slots[slot.index] === slot && slot.requestId === requestId && slot.batch.length > 0 && heap.used_heap_size > heapBytes) {
          failRequest(slot, outOfMemory);
          pump();
        }
      },
      // The worker is gone: its 'error' or 'exit' handler settles the jobs.
      () => {},
    );
  }

  function expire(job: Job, afterMs: number, budgetMs: number): NodeJS.Timeout {
    const error = new TypecheckIncompleteError('timeout', `the type-check did not finish within its ${budgetMs} ms budget; ${SIMPLIFY}`);
    return setTimeout(() => stop(job, error), Math.max(0, afterMs));
  }

  /**
   * The next check in turn that may take one of `free` free workers and, unless it goes alone,
   * the next ones in turn that may share its request (same typings); empty when none may start.
   */
  function nextRequest(free: number): Job[] {
    const first = queue.shift(threads, free);
    if (first === undefined) return [];
    const batch = [first];
    const shares = (job: Job) => !job.alone && job.typingsVersion === first.typingsVersion;
    while (!first.alone && batch.length < MAX_BATCH) {
      // Joining a request takes no further worker.
      const next = queue.shift(1, 1, shares);
      if (next === undefined) break;
      batch.push(next);
    }
    return batch;
  }

  function pump(): void {
    if (closed) return;
    for (const slot of slots) {
      if (queue.length === 0) break;
      if (slot === undefined || !slot.ready || slot.batch.length > 0) continue;
      const busy = slots.filter((other) => other !== undefined && other.batch.length > 0).length;
      const batch = nextRequest(threads - busy);
      if (batch.length === 0) break;
      const requestId = nextRequestId++;
      slot.batch = batch;
      slot.held = batch.map((job) => job.keys);
      queue.holding(slot.held, 1);
      slot.requestId = requestId;
      const request: CheckRequest = { id: requestId, codes: batch.map((job) => job.code), typingsVersion: batch[0].typingsVersion };
      if (slot.typingsVersion !== request.typingsVersion) {
        request.typings = batch[0].typings;
        slot.typingsVersion = request.typingsVersion;
      }
      slot.worker.postMessage(request);
      for (const job of batch) {
        job.slot = slot;
        // On a worker, the check itself gets at most the pool's own limit, within what is left of the run's share.
        const left = job.budgetMs - (performance.now() - job.submittedAt);
        clearTimeout(job.timer);
        job.timer = left <= maxMs ? expire(job, left, job.budgetMs) : expire(job, maxMs, maxMs);
      }
      slot.heapPoll = setInterval(() => measure(slot, requestId), HEAP_POLL_MS).unref();
    }
    for (let index = 0; index < threads; index++) {
      if (slots[index] !== undefined) continue;
      if (queue.length > 0 || (warmed && !bootFailed.has(index))) spawn(index);
    }
  }

  return {
    get started() {
      return started;
    },
    get requests() {
      return nextRequestId;
    },
    warm() {
      if (closed) return;
      warmed = true;
      pump();
    },
    check(code, typings, budget = {}) {
      if (closed) return Promise.reject(new TypecheckIncompleteError('unavailable', 'the type-checker is shut down'));
      const signal = budget.signal;
      if (signal?.aborted) return Promise.reject(new TypecheckIncompleteError('aborted', 'the run was cancelled before its type-check'));
      // Waiting for a worker (one starting, or busy) counts against the run's time, not against the pool's limit.
      const budgetMs = Math.max(1, budget.timeoutMs ?? maxMs);
      warmed = true;
      return new Promise<TypecheckDiagnostic[]>((resolve, reject) => {
        const job: Job = {
          keys: queue.keysOf(budget.owner),
          code,
          typings,
          typingsVersion: versionOf(typings),
          signal,
          slot: undefined,
          alone: false,
          resolve,
          reject,
          onAbort: () => stop(job, new TypecheckIncompleteError('aborted', 'the run was cancelled during its type-check')),
          budgetMs,
          submittedAt: performance.now(),
          timer: undefined,
        };
        job.timer = expire(job, budgetMs, budgetMs);
        signal?.addEventListener('abort', job.onAbort, { once: true });
        queue.push(job, job.keys);
        pump();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.drain()) {
        settle(job);
        job.reject(new TypecheckIncompleteError('unavailable', 'the type-checker is shut down'));
      }
      const running = slots.splice(0, threads, ...new Array<undefined>(threads).fill(undefined));
      await Promise.all(
        running.map(async (slot) => {
          if (slot === undefined) return;
          for (const job of endRequest(slot)) {
            settle(job);
            job.reject(new TypecheckIncompleteError('unavailable', 'the type-checker is shut down'));
          }
          await slot.worker.terminate();
        }),
      );
    },
  };
}
