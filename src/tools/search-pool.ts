/**
 * A small pool of worker threads that run grep and glob jobs off the host's
 * event loop. Matching a hostile regex or glob can backtrack for hours and
 * cannot be interrupted from inside; terminating its worker can (measured: a
 * worker stuck in `^(a+)+$` stops within a few ms of terminate()). So a job
 * ends when its signal fires (the run's end, a cancel, a caller's deadline):
 * a queued job is dropped, a running one has its worker terminated, and the
 * promise rejects with the signal's reason once the worker is gone. A job
 * also ends when it has run `timeoutMs` in its worker (counted from when the
 * worker begins it, so neither the wait for a free worker nor a thread's
 * start-up counts): it then rejects `TOOL_TIMEOUT`.
 *
 * Jobs wait their turn by tenant, then by run (src/fair-queue.ts), and no
 * run or tenant takes the last free worker while it holds all the others.
 *
 * Workers start on first use and are kept for the next job (a fresh thread
 * costs tens of ms of CPU); idle ones do not keep the process alive and are
 * closed after a minute. Each has a heap cap: a job past it fails, the host
 * stays up.
 */
import { Worker } from 'node:worker_threads';
import type { SearchJob, SearchValue } from './search-jobs.ts';
import type { SearchReply, SearchRequest } from './search-worker.ts';
import { PtcError } from '../errors.ts';
import { FairQueue, type QueueKeys, type QueueOwner, type TenantOfSession } from '../fair-queue.ts';
import { WorkspaceError } from './workspace-error.ts';

export interface SearchPoolOptions {
  /** Time one job may run in its worker, ms; past it the worker is terminated and the job fails `TOOL_TIMEOUT`. */
  timeoutMs: number;
  /** Worker threads at most; further jobs wait (their wait counts against their signal). */
  maxWorkers: number;
  /** Old-generation heap of each worker, MiB. */
  heapMiB: number;
  /** An idle worker is closed after this long, ms. Default 60,000. */
  idleMs?: number;
  /** The tenant of a session, so that tenants take turns before runs do (fair-queue.ts). Default: no tenants. */
  tenantOf?: TenantOfSession;
}

export interface SearchPool {
  /** `owner`: whose turn the job waits for (fair-queue.ts); a job without one is a run of its own. */
  run(job: SearchJob, signal: AbortSignal, owner?: QueueOwner): Promise<SearchValue>;
  /** Terminates every worker; running and queued jobs reject, later ones too. For tests and shutdown. */
  close(): Promise<void>;
  /** Worker threads alive now. */
  readonly size: number;
}

interface Pending {
  job: SearchJob;
  keys: QueueKeys;
  signal: AbortSignal;
  resolve(value: SearchValue): void;
  reject(error: unknown): void;
  onAbort?: () => void;
}

interface Slot {
  worker: Worker;
  current?: Pending & { id: number };
  idleTimer?: NodeJS.Timeout;
  jobTimer?: NodeJS.Timeout;
}

// The worker is a sibling module: .ts when running from source, .js once built.
const WORKER_URL = new URL(`./search-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

export function createSearchPool({ timeoutMs, maxWorkers, heapMiB, idleMs = 60_000, tenantOf }: SearchPoolOptions): SearchPool {
  const slots = new Set<Slot>();
  const queue = new FairQueue<Pending>(tenantOf);
  let busy = 0;

  /** The job leaves its worker: the worker no longer counts for its run and tenant. */
  const leave = (pending: Pending): void => {
    busy--;
    queue.holding([pending.keys], -1);
  };
  let nextId = 1;
  let closed = false;

  const settle = (slot: Slot, outcome: { value: SearchValue } | { error: unknown }): void => {
    const pending = slot.current;
    if (pending === undefined) return;
    slot.current = undefined;
    leave(pending);
    clearTimeout(slot.jobTimer);
    pending.signal.removeEventListener('abort', pending.onAbort!);
    if ('value' in outcome) pending.resolve(outcome.value);
    else pending.reject(outcome.error);
  };

  const retire = (slot: Slot): Promise<void> => {
    slots.delete(slot);
    clearTimeout(slot.idleTimer);
    clearTimeout(slot.jobTimer);
    return slot.worker.terminate().then(() => undefined);
  };

  const spawn = (): Slot => {
    const worker = new Worker(WORKER_URL, {
      name: 'ptc-search',
      // The host's own flags (such as --no-node-snapshot) are not all valid in a worker.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: heapMiB },
    });
    const slot: Slot = { worker };
    worker.on('message', (reply: SearchReply) => {
      if (slot.current === undefined || reply.id !== slot.current.id) return;
      if ('started' in reply) {
        slot.jobTimer = setTimeout(() => timedOut(slot), timeoutMs);
        return;
      }
      settle(slot, reply.ok ? { value: reply.value } : { error: new WorkspaceError(reply.reason, reply.message) });
      idle(slot);
      pump();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      slots.delete(slot);
      const message =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `the search ran out of memory (${heapMiB} MiB): narrow the path, glob or pattern`
          : 'the search worker failed: try again or narrow the path';
      settle(slot, { error: new WorkspaceError(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'too-large' : 'io-error', message) });
      pump();
    });
    worker.on('exit', () => {
      slots.delete(slot);
      settle(slot, { error: new WorkspaceError('io-error', 'the search worker stopped: try again') });
      pump();
    });
    slots.add(slot);
    return slot;
  };

  const timedOut = (slot: Slot): void => {
    const pending = slot.current;
    if (pending === undefined) return;
    slot.current = undefined;
    leave(pending);
    pending.signal.removeEventListener('abort', pending.onAbort!);
    void retire(slot).then(() => {
      pending.reject(
        new PtcError(
          'TOOL_TIMEOUT',
          `the search ran past its ${timeoutMs} ms limit and was stopped: narrow the path or glob, or simplify the pattern (nested quantifiers such as (a+)+ can take forever)`,
        ),
      );
      pump();
    });
  };

  const idle = (slot: Slot): void => {
    if (!slots.has(slot)) return;
    slot.worker.unref();
    clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => void retire(slot), idleMs);
    slot.idleTimer.unref();
  };

  const start = (slot: Slot, pending: Pending): void => {
    clearTimeout(slot.idleTimer);
    const id = nextId++;
    slot.current = { ...pending, id };
    busy++;
    queue.holding([pending.keys], 1);
    pending.signal.removeEventListener('abort', pending.onAbort!);
    // Running: cancelling means terminating the thread, then reporting.
    const onAbort = (): void => {
      const current = slot.current;
      if (current === undefined || current.id !== id) return;
      slot.current = undefined;
      leave(current);
      void retire(slot).then(() => {
        pending.reject(pending.signal.reason);
        pump();
      });
    };
    slot.current.onAbort = onAbort;
    pending.signal.addEventListener('abort', onAbort, { once: true });
    slot.worker.ref();
    slot.worker.postMessage({ id, job: pending.job } satisfies SearchRequest);
  };

  const pump = (): void => {
    while (queue.length > 0 && !closed) {
      let free: Slot | undefined;
      for (const slot of slots) if (slot.current === undefined) free = slot;
      if (free === undefined && slots.size >= maxWorkers) return;
      const next = queue.shift(maxWorkers, maxWorkers - busy);
      if (next === undefined) return;
      start(free ?? spawn(), next);
    }
  };

  return {
    get size() {
      return slots.size;
    },
    run(job, signal, owner) {
      return new Promise<SearchValue>((resolve, reject) => {
        if (signal.aborted) {
          reject(signal.reason);
          return;
        }
        if (closed) {
          reject(new WorkspaceError('io-error', 'the search pool is closed: the tools are shutting down'));
          return;
        }
        const pending: Pending = { job, keys: queue.keysOf(owner), signal, resolve, reject };
        // Queued: cancelling just drops it.
        pending.onAbort = () => {
          if (queue.remove(pending)) reject(signal.reason);
        };
        signal.addEventListener('abort', pending.onAbort, { once: true });
        queue.push(pending, pending.keys);
        pump();
      });
    },
    async close() {
      closed = true;
      for (const pending of queue.drain()) {
        pending.signal.removeEventListener('abort', pending.onAbort!);
        pending.reject(new WorkspaceError('io-error', 'the search pool is closed: the tools are shutting down'));
      }
      await Promise.all([...slots].map(retire));
    },
  };
}
