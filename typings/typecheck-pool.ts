/**
 * The type-checker off the event loop: a small pool of warm worker threads
 * (typecheck-worker.ts), each under a heap limit, each check under a time
 * budget and the run's abort signal. The TypeScript checker cannot be
 * interrupted from inside, so a check over its budget ends with its thread:
 * the thread is terminated and a fresh one started in its place. A check that
 * did not complete rejects with {@link TypecheckIncompleteError}; it never
 * resolves as clean.
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
import { LruCache } from './lru.ts';
import type { TypecheckerOptions } from './typecheck.ts';
import type { CheckRequest, TypecheckWorkerData, WorkerMessage } from './typecheck-protocol.ts';

export interface TypecheckPoolOptions extends TypecheckerOptions {
  /** Worker threads, each a warm checker (~60 MiB). Default: one less than `os.availableParallelism()`, from 1 to 4. */
  threads?: number;
  /**
   * Heap budget of each worker, MiB: a check whose worker's heap in use (garbage not yet
   * collected included) passes it fails `memory` and its worker is replaced. Polled every
   * 100 ms while a check runs; V8's own limit for the worker is twice this. Default 512.
   */
  heapMiB?: number;
  /**
   * Longest one check may run on a worker, ms. Default 10,000. The run's share of its own
   * `timeoutMs` bounds the whole wait too, waiting for a free or starting worker included.
   */
  timeoutMs?: number;
}

export interface CheckBudget {
  /** The check's share of the run's time, ms, from the request on; the pool's `timeoutMs` caps the time on a worker. Default: the pool's `timeoutMs`. */
  timeoutMs?: number;
  /** The run's signal: aborting it ends the check (and its worker). */
  signal?: AbortSignal;
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
  /** Terminates every thread; pending checks reject `unavailable`. */
  close(): Promise<void>;
}

export const DEFAULT_TYPECHECK_HEAP_MIB = 512;
export const DEFAULT_TYPECHECK_TIMEOUT_MS = 10_000;
/** How often a running check's heap is measured, ms. */
const HEAP_POLL_MS = 100;

/** One less than the cores (the event loop keeps one), at least 1 and at most 4: a warm check of a short program takes ~1 ms. */
export function defaultTypecheckThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

// From source this file is typecheck-pool.ts and starts typecheck-worker.ts (Node strips its
// types); built to dist/ it is typecheck-pool.js and starts the compiled typecheck-worker.js.
const WORKER_URL = new URL(`./typecheck-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

const SIMPLIFY = 'simplify the program (very deep nesting; huge unions, mapped or template-literal types over many members) and run it again';

interface Job {
  id: number;
  code: string;
  typings: string;
  typingsVersion: number;
  /** The run's share, ms, counted from the request: waiting for a worker spends it too. */
  budgetMs: number;
  submittedAt: number;
  timer: NodeJS.Timeout | undefined;
  /** Measures the worker's heap while the job runs on one. */
  heapPoll: NodeJS.Timeout | undefined;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  slot: Slot | undefined;
  resolve(diagnostics: TypecheckDiagnostic[]): void;
  reject(error: TypecheckIncompleteError): void;
}

interface Slot {
  index: number;
  worker: Worker;
  ready: boolean;
  job: Job | undefined;
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
  const queue: Job[] = [];
  // Typings are sent to a worker once per version, not with every check; a version is a
  // number per distinct text (the service hands out the same cached string each time).
  const versions = new LruCache<string, number>(16);
  let nextVersion = 0;
  let nextId = 0;
  let started = 0;
  let warmed = false;
  let closed = false;

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
    const slot: Slot = { index, worker, ready: false, job: undefined, typingsVersion: -1 };
    slots[index] = slot;
    worker.on('message', (message: WorkerMessage) => onMessage(slot, message));
    worker.on('error', (error: Error & { code?: string }) => {
      const outOfMemory = error.code === 'ERR_WORKER_OUT_OF_MEMORY';
      lost(slot, outOfMemory ? 'memory' : 'crashed', outOfMemory ? undefined : `${error.name}: ${error.message}`);
    });
    worker.on('exit', () => lost(slot, 'crashed', 'the checker thread exited'));
  }

  function onMessage(slot: Slot, message: WorkerMessage): void {
    if (slots[slot.index] !== slot) return;
    if (message.type === 'ready') {
      slot.ready = true;
      bootFailed.delete(slot.index);
      pump();
      return;
    }
    const job = slot.job;
    if (job === undefined || job.id !== message.id) return;
    slot.job = undefined;
    settle(job);
    if (message.type === 'result') job.resolve(message.diagnostics);
    else job.reject(new TypecheckIncompleteError('crashed', `the type-checker failed on this program (${message.error}); ${SIMPLIFY}`));
    pump();
  }

  /** A worker died (heap limit, a crash, an exit): its check fails, and a fresh worker takes its place. */
  function lost(slot: Slot, reason: 'memory' | 'crashed', detail: string | undefined): void {
    if (slots[slot.index] !== slot) return;
    slots[slot.index] = undefined;
    void slot.worker.terminate();
    const job = slot.job;
    if (job !== undefined) {
      settle(job);
      job.reject(
        reason === 'memory'
          ? new TypecheckIncompleteError('memory', `the type-check ran out of its ${heapMiB} MiB memory budget; ${SIMPLIFY}`)
          : new TypecheckIncompleteError('crashed', `the type-checker failed on this program; ${SIMPLIFY}`),
      );
    } else if (!slot.ready) {
      // It died while starting (a missing build, say). With no other worker alive or starting,
      // what waits would wait out its whole budget for nothing: it fails now.
      bootFailed.add(slot.index);
      const othersAlive = slots.some((other) => other !== undefined);
      for (const waiting of othersAlive ? [] : queue.splice(0)) {
        settle(waiting);
        waiting.reject(new TypecheckIncompleteError('unavailable', 'the type-checker could not start; the service log says why'));
      }
      process.emitWarning(`typecheck worker failed to start: ${detail ?? reason}`, 'PtcTypecheckWarning');
    }
    pump();
  }

  /** Ends a job's timer and abort listener; the job leaves the queue if it waited there. */
  function settle(job: Job): void {
    clearTimeout(job.timer);
    clearInterval(job.heapPoll);
    job.signal?.removeEventListener('abort', job.onAbort);
    const at = queue.indexOf(job);
    if (at >= 0) queue.splice(at, 1);
  }

  /** The budget ran out or the run was cancelled: a running check takes its worker with it. */
  function stop(job: Job, error: TypecheckIncompleteError): void {
    settle(job);
    const slot = job.slot;
    if (slot !== undefined && slot.job === job) {
      slot.job = undefined;
      slots[slot.index] = undefined;
      void slot.worker.terminate();
    }
    job.reject(error);
    pump();
  }

  function measure(slot: Slot, job: Job): void {
    slot.worker.getHeapStatistics().then(
      (heap) => {
        if (slot.job === job && heap.used_heap_size > heapBytes) {
          stop(job, new TypecheckIncompleteError('memory', `the type-check ran out of its ${heapMiB} MiB memory budget; ${SIMPLIFY}`));
        }
      },
      // The worker is gone: its 'error' or 'exit' handler settles the job.
      () => {},
    );
  }

  function expire(job: Job, afterMs: number, budgetMs: number): NodeJS.Timeout {
    const error = new TypecheckIncompleteError('timeout', `the type-check did not finish within its ${budgetMs} ms budget; ${SIMPLIFY}`);
    return setTimeout(() => stop(job, error), Math.max(0, afterMs));
  }

  function pump(): void {
    if (closed) return;
    for (const slot of slots) {
      if (queue.length === 0) break;
      if (slot === undefined || !slot.ready || slot.job !== undefined) continue;
      const job = queue.shift()!;
      job.slot = slot;
      slot.job = job;
      const request: CheckRequest = { id: job.id, code: job.code, typingsVersion: job.typingsVersion };
      if (slot.typingsVersion !== job.typingsVersion) {
        request.typings = job.typings;
        slot.typingsVersion = job.typingsVersion;
      }
      slot.worker.postMessage(request);
      // On a worker, the check itself gets at most the pool's own limit, within what is left of the run's share.
      const left = job.budgetMs - (performance.now() - job.submittedAt);
      clearTimeout(job.timer);
      job.timer = left <= maxMs ? expire(job, left, job.budgetMs) : expire(job, maxMs, maxMs);
      job.heapPoll = setInterval(() => measure(slot, job), HEAP_POLL_MS).unref();
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
          id: nextId++,
          code,
          typings,
          typingsVersion: versionOf(typings),
          heapPoll: undefined,
          signal,
          slot: undefined,
          resolve,
          reject,
          onAbort: () => stop(job, new TypecheckIncompleteError('aborted', 'the run was cancelled during its type-check')),
          budgetMs,
          submittedAt: performance.now(),
          timer: undefined,
        };
        job.timer = expire(job, budgetMs, budgetMs);
        signal?.addEventListener('abort', job.onAbort, { once: true });
        queue.push(job);
        pump();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0)) {
        settle(job);
        job.reject(new TypecheckIncompleteError('unavailable', 'the type-checker is shut down'));
      }
      const running = slots.splice(0, threads, ...new Array<undefined>(threads).fill(undefined));
      await Promise.all(
        running.map(async (slot) => {
          if (slot === undefined) return;
          if (slot.job !== undefined) {
            settle(slot.job);
            slot.job.reject(new TypecheckIncompleteError('unavailable', 'the type-checker is shut down'));
          }
          await slot.worker.terminate();
        }),
      );
    },
  };
}
