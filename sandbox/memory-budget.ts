/**
 * Admission by memory, not by slot count. A run that waits on a tool uses no
 * CPU; what it holds is its isolate's memory. So each runtime admits runs
 * against a memory budget:
 *
 * - At admission a run reserves `reserveBytes` (by default
 *   `DEFAULT_POOL.runReserveMiB`, a little more than an isolate parked in a
 *   tool call was measured to hold: bench/RESULTS.md).
 * - While it runs, its isolate is measured (isolated-vm's heap statistics:
 *   `total_physical_size` + `externally_allocated_size`, i.e. heap pages in
 *   RAM plus array buffers). Its charge is the larger of the two figures.
 * - A run is admitted while the charges plus one more reservation fit the
 *   budget (or when nothing runs at all, so a budget below one run still
 *   serves one run at a time).
 * - Admitted runs may grow up to their own heap limit. When the charges
 *   together outgrow the budget, admission stops (no headroom) and the
 *   runtime fails the run that grew most, kind `memory`, until the rest fit:
 *   a run that stayed small never pays for one that did not.
 *
 * Measuring needs the isolate's lock: a run in the middle of a synchronous
 * stretch is measured when it next awaits (its own heap limit bounds it
 * meanwhile).
 *
 * Only a run that may have grown is measured again. Guest code runs only when
 * the host hands the isolate something (the start, a reply, a fired timer),
 * and shows it ran by what it sends (a call, a log line): the runtime counts
 * each such event on the run's ticket (`touch`). A measurement covers the
 * events counted before it was asked for (isolated-vm queues it behind the
 * deliveries already handed over), so a run waiting on a tool, which nothing
 * touches, is measured once and then costs nothing per sweep. The budget
 * keeps count of the runs to measure as their tickets change, so the watch's
 * tick costs the same with thousands of runs waiting as with one.
 */
import { availableMemory, constrainedMemory } from 'node:process';
import os from 'node:os';
import type { SandboxFailure } from '../src/sandbox-runtime.ts';

export const MiB = 1024 * 1024;

/** The least memory budget the default gives, MiB. */
export const MIN_DEFAULT_MEMORY_BUDGET_MIB = 256;

/**
 * Half the memory this machine (or its cgroup) has available at start, and
 * at most half its total; never below `MIN_DEFAULT_MEMORY_BUDGET_MIB`. Read once, when a runtime is
 * created: the runs' budget, the processes' own baseline comes on top.
 */
export function defaultMemoryBudgetMiB(): number {
  const constrained = constrainedMemory();
  const total = constrained > 0 && constrained < os.totalmem() ? constrained : os.totalmem();
  const available = availableMemory();
  return Math.max(MIN_DEFAULT_MEMORY_BUDGET_MIB, Math.floor(Math.min(total / 2, available / 2) / MiB));
}

/**
 * What one admitted run holds against the budget. The runtime sets `measure`
 * and `stop`; the rest is the budget's to change (`touch`, measuring,
 * `enforce`, `release`), as it keeps a running count of the dirty runs.
 */
export interface BudgetTicket {
  /** Bytes the run's isolate was last measured at; 0 until measured. */
  readonly measuredBytes: number;
  /** Measures the run's isolate (set once it has one). */
  measure?: () => Promise<number>;
  /** Ends the run with this failure (set once it runs). */
  stop?: (failure: SandboxFailure) => void;
  /** A measurement is in flight (a run busy in a synchronous stretch answers late). */
  readonly measuring: boolean;
  /** Already stopped by the budget: never picked twice, never measured again. */
  readonly stopped: boolean;
  /** Events after which guest code may have run (and grown): see `touch`. */
  readonly changes: number;
  /** `changes` when the last answered measurement was asked for: equal means nothing ran since. */
  readonly measuredChanges: number;
}

/** The budget's own view of a ticket it holds. */
type Ticket = { -readonly [K in keyof BudgetTicket]: BudgetTicket[K] };

/** Whether the run may have grown since it was last measured. */
function isDirty(ticket: Ticket): boolean {
  return ticket.changes !== ticket.measuredChanges;
}

/** Whether a held ticket counts in `dirtyRuns`: dirty, and a sweep would still measure it. */
function countsDirty(ticket: Ticket): boolean {
  return !ticket.stopped && isDirty(ticket);
}

export class MemoryBudget {
  readonly limitBytes: number;
  readonly reserveBytes: number;
  /** The tickets held, each mapped to itself (the public view to the budget's own). */
  readonly #tickets = new Map<BudgetTicket, Ticket>();
  #usedBytes = 0;
  #admitted = 0;
  #stopped = 0;
  /**
   * Held tickets that count dirty (`countsDirty`), kept as they change so
   * that the watch reads it per tick without a scan of every run.
   */
  #dirty = 0;

  constructor(limitBytes: number, reserveBytes: number) {
    this.limitBytes = limitBytes;
    this.reserveBytes = reserveBytes;
  }

  /** Runs holding a ticket now. */
  get runs(): number {
    return this.#tickets.size;
  }
  /** Runs admitted since the start. */
  get admitted(): number {
    return this.#admitted;
  }
  /** Runs the budget failed `memory` since the start. */
  get stoppedRuns(): number {
    return this.#stopped;
  }
  /** The charges of the runs holding a ticket: each its reservation or its measured size, whichever is larger. */
  get usedBytes(): number {
    return this.#usedBytes;
  }

  /** Room for one more run's reservation (always, when nothing runs), with `elsewhereBytes` held outside the tickets. */
  hasRoom(elsewhereBytes = 0): boolean {
    return this.#tickets.size === 0 || this.#usedBytes + elsewhereBytes + this.reserveBytes <= this.limitBytes;
  }

  admit(): BudgetTicket {
    // Dirty from the start: its program is about to run.
    const ticket: Ticket = { measuredBytes: 0, measuring: false, stopped: false, changes: 1, measuredChanges: 0 };
    this.#tickets.set(ticket, ticket);
    this.#admitted++;
    this.#usedBytes += this.reserveBytes;
    this.#dirty++;
    return ticket;
  }

  release(ticket: BudgetTicket): void {
    const own = this.#tickets.get(ticket);
    if (own === undefined) return;
    this.#tickets.delete(ticket);
    this.#usedBytes -= this.#charge(own);
    if (countsDirty(own)) this.#dirty--;
  }

  /**
   * Counts an event after which the run's guest code may have run: it is
   * measured again at the next sweep. A released ticket is left alone.
   */
  touch(ticket: BudgetTicket): void {
    const own = this.#tickets.get(ticket);
    if (own === undefined) return;
    if (!own.stopped && !isDirty(own)) this.#dirty++;
    own.changes++;
  }

  /** Records a measurement of `ticket`'s isolate. */
  record(ticket: BudgetTicket, bytes: number): void {
    const own = this.#tickets.get(ticket);
    if (own === undefined) return;
    this.#usedBytes += Math.max(this.reserveBytes, bytes) - this.#charge(own);
    own.measuredBytes = bytes;
  }

  /**
   * Runs that may have grown since their last measurement (touched since, or
   * never measured), not counting runs the budget stopped: a sweep has
   * something to measure when this is above 0.
   */
  get dirtyRuns(): number {
    return this.#dirty;
  }

  /**
   * Measures every run that may have grown since its last measurement and is
   * not already being measured; resolves when all have answered.
   */
  async measureAll(): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const ticket of this.#tickets.values()) {
      const measure = ticket.measure;
      if (measure === undefined || ticket.measuring || ticket.stopped || !isDirty(ticket)) continue;
      ticket.measuring = true;
      // Events counted from here on may not be covered by this measurement: they keep the run dirty.
      const seen = ticket.changes;
      pending.push(
        measure().then(
          (bytes) => {
            ticket.measuring = false;
            // Released meanwhile: it no longer counts anywhere.
            if (!this.#tickets.has(ticket)) return;
            const before = countsDirty(ticket);
            ticket.measuredChanges = seen;
            this.#dirty += Number(countsDirty(ticket)) - Number(before);
            this.record(ticket, bytes);
          },
          // a disposed isolate (its run just ended) has nothing left to measure
          () => void (ticket.measuring = false),
        ),
      );
    }
    await Promise.all(pending);
  }

  /**
   * While the charges exceed the budget, fails the run charged most (the one
   * that grew most: every run started from the same reservation) with kind
   * `memory`. Returns how many runs it stopped.
   */
  enforce(): number {
    let projected = this.#usedBytes;
    for (const ticket of this.#tickets.values()) if (ticket.stopped) projected -= this.#charge(ticket);
    let count = 0;
    while (projected > this.limitBytes) {
      let biggest: Ticket | undefined;
      for (const ticket of this.#tickets.values()) {
        if (ticket.stopped || ticket.stop === undefined || ticket.measuredBytes <= this.reserveBytes) continue;
        if (biggest === undefined || ticket.measuredBytes > biggest.measuredBytes) biggest = ticket;
      }
      // Over the budget on reservations alone (a budget below one run): nothing grew, nothing to blame.
      if (biggest === undefined) break;
      // A stopped run is never measured again: it leaves the dirty count.
      if (countsDirty(biggest)) this.#dirty--;
      biggest.stopped = true;
      projected -= this.#charge(biggest);
      count++;
      this.#stopped++;
      const mib = (biggest.measuredBytes / MiB).toFixed(0);
      biggest.stop?.({
        kind: 'memory',
        message:
          `the sandbox ran short of memory for all its runs, and this run had grown the most (${mib} MiB): ` +
          'process the data in smaller pieces and keep less of it in memory, or run it again later',
      });
    }
    return count;
  }

  #charge(ticket: Ticket): number {
    return Math.max(this.reserveBytes, ticket.measuredBytes);
  }
}

/**
 * Measures the runs of `budget` in the background and enforces it. A sweep
 * measures the runs that may have grown since their last measurement, each
 * measurement costing CPU, so sweeps are spaced by a minimum per such run and
 * overall, keeping them to a small share of a core; a rise of the process's RSS by an eighth of
 * the budget since the last sweep brings the next one forward. Runs parked
 * in a tool call are not measured again, however many there are. Returns a
 * function that stops the watch.
 */
export function watchBudget(budget: MemoryBudget, onStopped?: (count: number) => void): () => void {
  let sweeping = false;
  let lastSweep = 0;
  let rssAtSweep = process.memoryUsage.rss();
  const tick = (): void => {
    if (sweeping || budget.runs === 0) return;
    const dirty = budget.dirtyRuns;
    if (dirty === 0) return;
    const now = performance.now();
    const rss = process.memoryUsage.rss();
    const due = now - lastSweep >= Math.max(250, 2 * dirty) || rss - rssAtSweep > budget.limitBytes / 8;
    if (!due) return;
    sweeping = true;
    void budget.measureAll().then(() => {
      sweeping = false;
      lastSweep = performance.now();
      rssAtSweep = process.memoryUsage.rss();
      const stopped = budget.enforce();
      if (stopped > 0) onStopped?.(stopped);
    });
  };
  const timer = setInterval(tick, 100);
  // An idle runtime must not keep the host alive.
  timer.unref();
  return () => clearInterval(timer);
}
