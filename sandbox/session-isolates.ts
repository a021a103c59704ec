/**
 * Isolates kept between the runs of one session. A run that ended cleanly
 * leaves its isolate here with a fresh context in it (recycleIsolate in
 * isolate-run.ts); the session's next run takes it instead of a new isolate,
 * and skips the isolate's constructor, isolated-vm's default context and the
 * disposal: about a third of a short run's CPU. Never across sessions: runs of
 * one session share the isolate's heap limit and timing (its compilation
 * cache and string table), nothing they can reach.
 *
 * Bounded: at most `limit` isolates wait here (and at most `limit` are being
 * recycled), holding at most `maxBytes` of heap pages in RAM together (an
 * isolate kept after a big run holds tens of MiB), the least recently kept
 * goes first, and each is disposed after `idleMs` unused. `clear` gives their
 * memory back at once (the runtime calls it when its memory budget is short).
 */
import { discardIsolate, recycleIsolate, type PreparedIsolate } from './isolate-run.ts';

export interface SessionIsolatesOptions {
  /** Isolates kept at most, all sessions together; 0 keeps none. */
  limit: number;
  /** Heap pages in RAM the kept isolates may hold together, bytes (isolated-vm's `total_physical_size`). */
  maxBytes: number;
  /** How long an isolate is kept unused, ms. */
  idleMs: number;
  /** How the fresh context is set up, see prepareIsolate. */
  offThread: boolean;
}

interface Kept {
  readonly sessionId: string;
  readonly prepared: PreparedIsolate;
  readonly since: number;
  /** Its heap pages in RAM when kept. */
  readonly bytes: number;
}

/** An isolate being recycled; a run of its session may claim it before it is ready. */
interface Recycling {
  readonly memoryMiB: number;
  claim?: (fresh: PreparedIsolate | undefined) => void;
}

export class SessionIsolates {
  readonly #options: SessionIsolatesOptions;
  /** Insertion order is use order: the first is the least recently kept. */
  readonly #kept = new Set<Kept>();
  readonly #bySession = new Map<string, Kept[]>();
  readonly #recycling = new Map<string, Recycling[]>();
  /** What the kept isolates' `bytes` add up to. */
  #bytes = 0;
  #sweeper: NodeJS.Timeout | undefined;
  #closed = false;
  /** Recycles and disposals under way: closing waits for them (a process leaving under a live isolate aborts). */
  readonly #underWay = new Set<Promise<void>>();
  /** Isolates a later run of the same session took, since start. */
  reused = 0;

  constructor(options: SessionIsolatesOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#kept.size;
  }

  /** The kept isolates' heap pages in RAM when each was kept, bytes. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * A kept isolate of `sessionId` with a fresh context and `memoryMiB` heap, if there is one, or
   * one of its runs that just ended, once recycled (a millisecond or so, less than a new isolate
   * costs; without the wait, sessions that run back to back would each hold twice the isolates).
   */
  async take(sessionId: string, memoryMiB: number): Promise<PreparedIsolate | undefined> {
    const list = this.#bySession.get(sessionId);
    const at = list === undefined ? -1 : list.findIndex((kept) => kept.prepared.memoryMiB === memoryMiB);
    if (list !== undefined && at >= 0) {
      const [kept] = list.splice(at, 1);
      this.#forget(kept, list);
      this.reused++;
      return kept.prepared;
    }
    const recycling = this.#recycling.get(sessionId)?.find((entry) => entry.claim === undefined && entry.memoryMiB === memoryMiB);
    if (recycling === undefined) return undefined;
    const fresh = await new Promise<PreparedIsolate | undefined>((resolve) => (recycling.claim = resolve));
    if (fresh !== undefined) this.reused++;
    return fresh;
  }

  /**
   * The isolate of a run of `sessionId` that ended cleanly (RunControl.recycle): recycled in the
   * background, then kept, unless it is not reusable or nothing may be kept. Resolves once it is
   * kept, claimed or disposed. Disposed at once while `limit` recycles (or disposals) are under way: the end of
   * a burst (a thousand runs ending together) would otherwise recycle a thousand isolates to keep
   * a few.
   */
  offer(sessionId: string, prepared: PreparedIsolate): Promise<void> {
    if (this.#closed) {
      discardIsolate(prepared);
      return Promise.resolve();
    }
    if (this.#underWay.size >= this.#options.limit) {
      // Off the reply path, as runInIsolate disposes: the run's outcome is on its way.
      return this.#track(
        new Promise((resolve) =>
          setImmediate(() => {
            discardIsolate(prepared);
            resolve();
          }),
        ),
      );
    }
    const recycling: Recycling = { memoryMiB: prepared.memoryMiB };
    const inFlight = this.#recycling.get(sessionId);
    if (inFlight === undefined) this.#recycling.set(sessionId, [recycling]);
    else inFlight.push(recycling);
    const done = recycleIsolate(prepared, this.#options.offThread).then((fresh) => {
      const list = this.#recycling.get(sessionId) as Recycling[];
      list.splice(list.indexOf(recycling), 1);
      if (list.length === 0) this.#recycling.delete(sessionId);
      if (recycling.claim !== undefined) return recycling.claim(fresh);
      if (fresh === undefined) return;
      if (this.#closed) return discardIsolate(fresh);
      // Synchronous: the isolate is idle, just prepared.
      const kept: Kept = { sessionId, prepared: fresh, since: performance.now(), bytes: fresh.isolate.getHeapStatisticsSync().total_physical_size }
      this.#kept.add(kept);
      this.#bytes += kept.bytes;
      const kin = this.#bySession.get(sessionId);
      if (kin === undefined) this.#bySession.set(sessionId, [kept]);
      else kin.push(kept);
      while (this.#kept.size > this.#options.limit || this.#bytes > this.#options.maxBytes) this.#drop(this.#kept.values().next().value as Kept);
      this.#sweeper ??= setInterval(() => this.#sweep(), Math.max(10, this.#options.idleMs / 2)).unref();
    });
    return this.#track(done);
  }

  #track(work: Promise<void>): Promise<void> {
    this.#underWay.add(work);
    void work.then(() => this.#underWay.delete(work));
    return work;
  }

  /** Resolves once no recycle or disposal is under way (those started meanwhile included). */
  async settled(): Promise<void> {
    while (this.#underWay.size > 0) await Promise.allSettled([...this.#underWay]);
  }

  /** Disposes every kept isolate. */
  clear(): void {
    for (const kept of [...this.#kept]) this.#drop(kept);
  }

  /** Disposes every kept isolate now, and each one still being recycled once it is; resolves when none is left. */
  async close(): Promise<void> {
    this.#closed = true;
    this.clear();
    await Promise.allSettled([...this.#underWay]);
  }

  #sweep(): void {
    const oldest = performance.now() - this.#options.idleMs;
    for (const kept of this.#kept) {
      if (kept.since > oldest) break;
      this.#drop(kept);
    }
  }

  #drop(kept: Kept): void {
    const list = this.#bySession.get(kept.sessionId);
    if (list !== undefined) {
      const at = list.indexOf(kept);
      if (at >= 0) list.splice(at, 1);
    }
    this.#forget(kept, list);
    discardIsolate(kept.prepared);
  }

  #forget(kept: Kept, list: Kept[] | undefined): void {
    if (this.#kept.delete(kept)) this.#bytes -= kept.bytes;
    if (list !== undefined && list.length === 0) this.#bySession.delete(kept.sessionId);
    if (this.#kept.size === 0 && this.#sweeper !== undefined) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}
