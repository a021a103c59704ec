/**
 * Keeps `children` sandbox processes alive: replaces any that dies (counted
 * as a restart), backs off when they die before they are ready, and tells
 * the pool when a slot frees.
 */
import type { ResolvedProcessRuntimeOptions } from './options.ts';
import { SandboxChild } from './sandbox-child.ts';

/** Consecutive startup failures after which `ready()` gives up. */
const startupAttempts = 3;
const maxBackoffMs = 5_000;

export class Supervisor {
  readonly #options: ResolvedProcessRuntimeOptions;
  readonly #onSlotFree: () => void;
  readonly #slots: SandboxChild[] = [];
  /** Every process not yet exited, retiring ones included. */
  readonly #live = new Set<SandboxChild>();
  readonly #everReady = new WeakSet<SandboxChild>();
  #readyWaiters: Array<{ resolve(): void; reject(error: Error): void }> = [];
  #startupFailures = 0;
  #lastStartupFailure = '';
  #respawns = new Set<NodeJS.Timeout>();
  #restarts = 0;
  /** Budget stops reported by children that have exited. */
  #pastMemoryStopped = 0;
  #pastIsolatesReused = 0;
  #closed = false;

  constructor(options: ResolvedProcessRuntimeOptions, onSlotFree: () => void) {
    this.#options = options;
    this.#onSlotFree = onSlotFree;
    for (let index = 0; index < options.children; index++) this.#slots.push(this.#spawn(index));
  }

  get restarts(): number {
    return this.#restarts;
  }

  get readyCount(): number {
    return this.#slots.filter((child) => child.ready).length;
  }

  get busy(): number {
    let busy = 0;
    for (const child of this.#live) busy += child.runs;
    return busy;
  }

  processes(): Array<{ pid: number; ready: boolean; runs: number }> {
    return [...this.#live].map((child) => ({ pid: child.pid, ready: child.ready, runs: child.runs }));
  }

  /**
   * The ready child with headroom for one more run, least charged first: a
   * burst spreads over the children, which prepare its isolates in parallel.
   */
  take(): SandboxChild | undefined {
    let best: SandboxChild | undefined;
    for (const child of this.#slots) {
      if (child.hasRoom && (!best || child.chargedBytes < best.chargedBytes)) best = child;
    }
    return best;
  }

  /** No child is ready yet, and the children may still start (they have not failed their start-up attempts). */
  get starting(): boolean {
    return this.readyCount === 0 && this.#startupFailures < startupAttempts && !this.#closed;
  }

  /**
   * What a run waits for when no child takes it: a child at all while none is
   * ready, a compute slot when a child with memory for it is at its gate of
   * computing runs, else memory.
   */
  get shortage(): 'compute' | 'memory' | 'starting' {
    if (this.readyCount === 0) return 'starting';
    return this.#slots.some((child) => child.shortage === 'compute') ? 'compute' : 'memory';
  }

  /** Budget charged to the children that take runs (a retiring child's runs end on their own). */
  get chargedBytes(): number {
    let total = 0;
    for (const child of this.#slots) total += child.chargedBytes;
    return total;
  }

  /** What the children's runs grew past their reservations, as last reported (the parent holds the reservations). */
  get grownBytes(): number {
    let total = 0;
    for (const child of this.#slots) total += child.grownBytes;
    return total;
  }

  get memoryStopped(): number {
    let total = this.#pastMemoryStopped;
    for (const child of this.#live) total += child.memoryStopped;
    return total;
  }

  /** What the live children keep for sessions, bytes (a child that exits gives its isolates back). */
  get keptIsolateBytes(): number {
    let total = 0;
    for (const child of this.#live) total += child.keptIsolateBytes;
    return total;
  }

  get isolatesReused(): number {
    let total = this.#pastIsolatesReused;
    for (const child of this.#live) total += child.isolatesReused;
    return total;
  }

  ready(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('the sandbox runtime is closed; create a new one'));
    if (this.readyCount === this.#options.children) return Promise.resolve();
    if (this.#startupFailures >= startupAttempts) return Promise.reject(this.#startupError());
    return new Promise((resolve, reject) => this.#readyWaiters.push({ resolve, reject }));
  }

  async close(message: string): Promise<void> {
    this.#closed = true;
    for (const timer of this.#respawns) clearTimeout(timer);
    this.#respawns.clear();
    this.#settleReady(new Error('the sandbox runtime closed before its processes were ready'));
    await Promise.all([...this.#live].map((child) => child.terminate(message)));
  }

  #spawn(index: number): SandboxChild {
    const child: SandboxChild = new SandboxChild(this.#options, {
      onReady: (child) => {
        this.#everReady.add(child);
        this.#startupFailures = 0;
        if (this.readyCount === this.#options.children) this.#settleReady();
        this.#onSlotFree();
      },
      onRunEnd: () => this.#onSlotFree(),
      onRetire: () => {
        if (this.#closed || this.#slots[index] !== child) return;
        this.#restarts++;
        this.#slots[index] = this.#spawn(index);
      },
      onExit: (_, reason) => {
        this.#live.delete(child);
        this.#pastMemoryStopped += child.memoryStopped;
        this.#pastIsolatesReused += child.isolatesReused;
        this.#replace(index, child, reason);
      },
    });
    this.#live.add(child);
    return child;
  }

  #replace(index: number, child: SandboxChild, reason: string): void {
    if (this.#closed || this.#slots[index] !== child) return;
    let delayMs = 0;
    if (!this.#everReady.has(child)) {
      this.#startupFailures++;
      delayMs = Math.min(maxBackoffMs, 100 * 2 ** (this.#startupFailures - 1));
      if (this.#startupFailures >= startupAttempts) {
        this.#lastStartupFailure = reason;
        this.#settleReady(this.#startupError());
      }
    }
    const timer = setTimeout(() => {
      this.#respawns.delete(timer);
      if (this.#closed) return;
      this.#restarts++;
      this.#slots[index] = this.#spawn(index);
    }, delayMs);
    this.#respawns.add(timer);
  }

  #startupError(): Error {
    return new Error(`the sandbox ${this.#options.transport === 'thread' ? 'threads' : 'processes'} fail to start (${this.#lastStartupFailure}); check the runtime installation`);
  }

  #settleReady(error?: Error): void {
    const waiters = this.#readyWaiters;
    this.#readyWaiters = [];
    for (const waiter of waiters) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
  }
}
