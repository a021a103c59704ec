/**
 * The bounded wait queue of both runtimes: a run that finds no room (a
 * compute slot and memory headroom) waits here, first come first served,
 * until room frees, the queue stalls, or its caller aborts. A run refused
 * (queue full, or the queue stalled) fails `busy` with what it lacked: nothing
 * of it ran, so the caller may retry.
 *
 * The timeout counts from the later of the run's arrival and the last time
 * the queue moved (a waiter started), not from the arrival alone: a burst
 * that memory holds drains at the pace the machine prepares isolates, and a
 * run far back in it is not shed for the queue time ahead of it. Only a queue
 * that has not moved for `timeoutMs` sheds, and then the runs that waited
 * that long.
 */
import type { BusyCause, SandboxFailure } from '../src/sandbox-runtime.ts';

export interface Waiter<Slot> {
  /** Called synchronously when a slot is handed over. */
  start(slot: Slot): void;
  fail(failure: SandboxFailure): void;
}

/** What a run waits for while it waits: a compute slot, memory headroom, or a runtime still starting. */
export type Shortage = Extract<BusyCause, 'compute' | 'memory' | 'starting'>;

export interface WaitQueueOptions {
  /** Runs that may wait; past it a run fails `busy` (`queue-full`) at once. 0: none waits. */
  limit: number;
  /** How long the queue may stand still before a run that waited that long fails `busy`, ms. */
  timeoutMs: number;
  /** What the runtime lacks now, named in a refusal. */
  shortage: () => Shortage;
  /** The timeout counts from each run's arrival alone (a fixed longest wait), for a queue whose caller times the wait itself. */
  fromArrival?: boolean;
  /** True while the runtime is still starting (and may yet start): that time is not counted as standing still. */
  starting?: () => boolean;
}

interface Entry<Slot> {
  waiter: Waiter<Slot>;
  enteredAt: number;
  signal: AbortSignal;
  onAbort: () => void;
}

export class WaitQueue<Slot> {
  readonly #limit: number;
  readonly #timeoutMs: number;
  readonly #shortage: () => Shortage;
  readonly #fromArrival: boolean;
  readonly #starting: (() => boolean) | undefined;
  #entries: Entry<Slot>[] = [];
  #refused = 0;
  #movedAt = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: WaitQueueOptions) {
    this.#limit = options.limit;
    this.#timeoutMs = options.timeoutMs;
    this.#shortage = options.shortage;
    this.#fromArrival = options.fromArrival === true;
    this.#starting = options.starting;
  }

  get size(): number {
    return this.#entries.length;
  }

  /** Runs failed `busy` so far: the queue was full, or it stalled. */
  get refused(): number {
    return this.#refused;
  }

  enter(waiter: Waiter<Slot>, signal: AbortSignal): void {
    if (this.#entries.length >= this.#limit) {
      this.#refused++;
      // With no queue at all, the run was refused for what the runtime lacks.
      waiter.fail(this.#limit === 0 ? this.#refusal(this.#shortage(), 'now') : {
        kind: 'busy',
        busy: 'queue-full',
        message: `no sandbox capacity: ${this.#limit} runs are already waiting; try again shortly`,
      });
      return;
    }
    const entry: Entry<Slot> = {
      waiter,
      signal,
      enteredAt: performance.now(),
      onAbort: () => {
        this.#remove(entry);
        waiter.fail({ kind: 'abort', message: 'the run was aborted while it waited for sandbox capacity' });
      },
    };
    signal.addEventListener('abort', entry.onAbort, { once: true });
    this.#entries.push(entry);
    this.#arm();
  }

  /** Hands slots to waiters in order while `take` yields one. */
  drain(take: () => Slot | undefined): void {
    while (this.#entries.length > 0) {
      const slot = take();
      if (slot === undefined) return;
      const entry = this.#entries.shift() as Entry<Slot>;
      this.#movedAt = performance.now();
      entry.signal.removeEventListener('abort', entry.onAbort);
      entry.waiter.start(slot);
    }
    this.#disarmIfEmpty();
  }

  failAll(failure: SandboxFailure): void {
    for (const entry of this.#entries.splice(0)) {
      entry.signal.removeEventListener('abort', entry.onAbort);
      entry.waiter.fail(failure);
    }
    this.#disarmIfEmpty();
  }

  /** An empty queue holds no timer: it must not keep the process alive. */
  #disarmIfEmpty(): void {
    if (this.#entries.length > 0) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** When the oldest waiter's wait (from its arrival or the queue's last move) runs out. */
  #deadline(): number | undefined {
    const head = this.#entries[0];
    if (head === undefined) return undefined;
    return (this.#fromArrival ? head.enteredAt : Math.max(head.enteredAt, this.#movedAt)) + this.#timeoutMs;
  }

  /** One timer for the whole queue, set for the head (every later waiter's deadline is no earlier). */
  #arm(): void {
    if (this.#timer !== undefined) return;
    const deadline = this.#deadline();
    if (deadline === undefined) return;
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, deadline - performance.now()));
  }

  #expire(): void {
    this.#timer = undefined;
    const now = performance.now();
    // Waiting for the runtime to start is not a stall: the wait counts from when it is up.
    if (!this.#fromArrival && this.#starting?.() === true) this.#movedAt = now;
    let deadline = this.#deadline();
    if (deadline !== undefined && deadline <= now) {
      const cause = this.#shortage();
      while (deadline !== undefined && deadline <= now) {
        const entry = this.#entries.shift() as Entry<Slot>;
        entry.signal.removeEventListener('abort', entry.onAbort);
        this.#refused++;
        entry.waiter.fail(this.#refusal(cause, `within ${this.#timeoutMs} ms`));
        deadline = this.#deadline();
      }
    }
    this.#arm();
  }

  #refusal(cause: Shortage, when: string): SandboxFailure {
    return {
      kind: 'busy',
      busy: cause,
      message:
        cause === 'compute'
          ? `no compute slot freed up ${when}: every slot is held by runs computing; try again shortly`
          : cause === 'starting'
            ? `the sandbox did not become ready ${when}; try again shortly`
            : `no sandbox memory headroom freed up ${when}; try again shortly`,
    };
  }

  #remove(entry: Entry<Slot>): void {
    entry.signal.removeEventListener('abort', entry.onAbort);
    this.#entries = this.#entries.filter((other) => other !== entry);
    this.#disarmIfEmpty();
  }
}
