/**
 * The bounded wait queue of both runtimes: a run that finds no memory
 * headroom waits here, first come first served, until headroom frees, the
 * wait times out, or its caller aborts. A run refused (queue full, or the wait
 * timed out) fails `busy`: nothing of it ran, so the caller may retry.
 */
import type { SandboxFailure } from '../src/sandbox-runtime.ts';

export interface Waiter<Slot> {
  /** Called synchronously when a slot is handed over. */
  start(slot: Slot): void;
  fail(failure: SandboxFailure): void;
}

interface Entry<Slot> {
  waiter: Waiter<Slot>;
  timer: NodeJS.Timeout;
  signal: AbortSignal;
  onAbort: () => void;
}

export class WaitQueue<Slot> {
  readonly #limit: number;
  readonly #timeoutMs: number;
  #entries: Entry<Slot>[] = [];
  #refused = 0;

  constructor(limit: number, timeoutMs: number) {
    this.#limit = limit;
    this.#timeoutMs = timeoutMs;
  }

  get size(): number {
    return this.#entries.length;
  }

  /** Runs failed `busy` so far: the queue was full, or their wait timed out. */
  get refused(): number {
    return this.#refused;
  }

  enter(waiter: Waiter<Slot>, signal: AbortSignal): void {
    if (this.#entries.length >= this.#limit) {
      this.#refused++;
      waiter.fail({
        kind: 'busy',
        message: `no sandbox capacity: ${this.#limit} runs are already waiting; try again shortly`,
      });
      return;
    }
    const entry: Entry<Slot> = {
      waiter,
      signal,
      timer: setTimeout(() => {
        this.#remove(entry);
        this.#refused++;
        waiter.fail({
          kind: 'busy',
          message: `no sandbox capacity freed up within ${this.#timeoutMs} ms; try again shortly`,
        });
      }, this.#timeoutMs),
      onAbort: () => {
        this.#remove(entry);
        waiter.fail({ kind: 'abort', message: 'the run was aborted while it waited for sandbox capacity' });
      },
    };
    signal.addEventListener('abort', entry.onAbort, { once: true });
    this.#entries.push(entry);
  }

  /** Hands slots to waiters in order while `take` yields one. */
  drain(take: () => Slot | undefined): void {
    while (this.#entries.length > 0) {
      const slot = take();
      if (slot === undefined) return;
      const entry = this.#entries.shift() as Entry<Slot>;
      this.#detach(entry);
      entry.waiter.start(slot);
    }
  }

  failAll(failure: SandboxFailure): void {
    for (const entry of [...this.#entries]) {
      this.#remove(entry);
      entry.waiter.fail(failure);
    }
  }

  #remove(entry: Entry<Slot>): void {
    this.#detach(entry);
    this.#entries = this.#entries.filter((other) => other !== entry);
  }

  #detach(entry: Entry<Slot>): void {
    clearTimeout(entry.timer);
    entry.signal.removeEventListener('abort', entry.onAbort);
  }
}
