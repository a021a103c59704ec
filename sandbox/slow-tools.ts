import { SLOW_TOOL_MAX_NAMES, SLOW_TOOL_MEMORY_MS } from './tuning.ts';

/**
 * The runtime's memory of slow tools: those whose calls recently missed the host's turn in a
 * synchronous crossing (I/O-bound tools), or answered more than its shared memory holds (tools
 * returning pages of data; each such answer renews it, however the call crossed). The
 * crossing's channel judges (crossing/channel.ts) and tells the guest of the run at once; runs
 * started while a tool is remembered send its calls by the asynchronous crossing from the start:
 * without this, every run of a burst waited one host turn on its first call before learning it,
 * holding an isolated-vm thread meanwhile. A tool is forgotten `memoryMs` after it was last
 * judged slow, so one that became fast is tried synchronously again.
 */
export class SlowTools {
  readonly #until = new Map<string, number>();
  #names: readonly string[] = [];
  #nextExpiry = Infinity;
  readonly #memoryMs: number;
  readonly #maxNames: number;

  constructor(memoryMs = SLOW_TOOL_MEMORY_MS, maxNames = SLOW_TOOL_MAX_NAMES) {
    this.#memoryMs = memoryMs;
    this.#maxNames = maxNames;
  }

  /** A call of `name` missed the host's turn, or its reply did not fit the shared memory. */
  add(name: string, now = performance.now()): void {
    const known = this.#until.has(name);
    if (!known && this.#until.size >= this.#maxNames) return;
    const until = now + this.#memoryMs;
    this.#until.set(name, until);
    if (until < this.#nextExpiry) this.#nextExpiry = until;
    if (!known) this.#names = [...this.#until.keys()];
  }

  /** The tools remembered now. The same array until the set changes: a run start costs no allocation. */
  current(now = performance.now()): readonly string[] {
    if (now < this.#nextExpiry) return this.#names;
    let next = Infinity;
    for (const [name, until] of this.#until) {
      if (until <= now) this.#until.delete(name);
      else if (until < next) next = until;
    }
    this.#nextExpiry = next;
    this.#names = [...this.#until.keys()];
    return this.#names;
  }
}
