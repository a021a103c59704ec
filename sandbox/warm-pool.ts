/**
 * A few never-used isolates (bootstrap evaluated) kept ready, so a run
 * skips isolate creation. `take` hands one out; it is refilled off the
 * request path (the runtime calls `refill` once a run has finished); an
 * isolate is never returned to the pool.
 */
import { discardIsolate, prepareIsolate, type PreparedIsolate } from './isolate-run.ts';

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
  close(): void;
}

export function createWarmPool(size: number, memoryMiB: number): WarmPool {
  const idle: PreparedIsolate[] = [];
  let pending = 0;
  let closed = false;
  let waiters: (() => void)[] = [];

  const settleWaiters = (): void => {
    if (idle.length + pending < size && !closed) return;
    if (pending > 0) return;
    const done = waiters;
    waiters = [];
    for (const resolve of done) resolve();
  };
  const refill = (): void => {
    while (!closed && idle.length + pending < size) {
      pending++;
      // setImmediate keeps isolate creation out of the caller's tick.
      setImmediate(() => {
        prepareIsolate(memoryMiB).then(
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

  return {
    async take(wanted) {
      if (wanted === memoryMiB && !closed) {
        const prepared = idle.shift();
        if (prepared !== undefined) return prepared;
      }
      return prepareIsolate(wanted);
    },
    refill,
    filled() {
      if (pending === 0) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    close() {
      closed = true;
      for (const prepared of idle.splice(0)) discardIsolate(prepared);
      settleWaiters();
    },
  };
}
