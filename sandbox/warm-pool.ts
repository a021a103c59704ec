/**
 * A few never-used isolates (bootstrap evaluated) kept ready, so a run
 * skips isolate creation. `take` hands one out; it is refilled off the
 * request path (the runtime calls `refill` once a run has finished); an
 * isolate is never returned to the pool.
 *
 * The pool follows demand: each `take` that finds it empty doubles its
 * target, up to `WARM_POOL_GROWTH_LIMIT` (sandbox/tuning.ts) times `size` (a burst then finds isolates made
 * between its runs' ends); after `WARM_POOL_SHRINK_AFTER_MS` without such a miss the
 * target halves back towards `size`, discarding the surplus (an idle isolate
 * holds memory).
 */
import { discardIsolate, prepareIsolate, type PreparedIsolate } from './isolate-run.ts';
import { WARM_POOL_GROWTH_LIMIT, WARM_POOL_SHRINK_AFTER_MS } from './tuning.ts';

export interface WarmPool {
  /** A prepared isolate of `memoryMiB`: from the pool when it matches, else made now. */
  take(memoryMiB: number): Promise<PreparedIsolate>;
  /**
   * Tops the pool up in the background. Call it when a run has finished:
   * creating an isolate blocks the event loop for milliseconds, which must
   * not land in the middle of a run.
   */
  refill(): void;
  /** Resolves when the pool is full. */
  filled(): Promise<void>;
  /**
   * Disposes the idle isolates, and each one still being made once it is; resolves when none is
   * left (a process leaving while isolated-vm still sets one up can abort).
   */
  close(): Promise<void>;
}

/** `offThread`: how isolates are prepared, see prepareIsolate. */
export function createWarmPool(size: number, memoryMiB: number, offThread = false): WarmPool {
  const idle: PreparedIsolate[] = [];
  let target = size;
  let lastMiss = 0;
  let pending = 0;
  let closed = false;
  let waiters: (() => void)[] = [];

  const settleWaiters = (): void => {
    if (idle.length + pending < target && !closed) return;
    if (pending > 0) return;
    const done = waiters;
    waiters = [];
    for (const resolve of done) resolve();
  };
  const refill = (): void => {
    if (target > size && performance.now() - lastMiss > WARM_POOL_SHRINK_AFTER_MS) {
      target = Math.max(size, target >> 1);
      for (const prepared of idle.splice(target)) discardIsolate(prepared);
    }
    while (!closed && idle.length + pending < target) {
      pending++;
      // setImmediate keeps isolate creation out of the caller's tick.
      setImmediate(() => {
        if (closed) {
          pending--;
          settleWaiters();
          return;
        }
        prepareIsolate(memoryMiB, offThread).then(
          (prepared) => {
            pending--;
            if (closed) discardIsolate(prepared);
            else idle.push(prepared);
            settleWaiters();
          },
          () => {
            pending--;
            settleWaiters();
          },
        );
      });
    }
  };
  refill();
  const filled = (): Promise<void> => (pending === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve)));

  return {
    async take(wanted) {
      if (wanted === memoryMiB && !closed) {
        const prepared = idle.shift();
        if (prepared !== undefined) return prepared;
        if (size > 0) target = Math.min(size * WARM_POOL_GROWTH_LIMIT, target * 2);
        lastMiss = performance.now();
      }
      return prepareIsolate(wanted, offThread);
    },
    refill,
    filled,
    close() {
      closed = true;
      for (const prepared of idle.splice(0)) discardIsolate(prepared);
      settleWaiters();
      return filled();
    },
  };
}
