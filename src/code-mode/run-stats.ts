/**
 * A run's budgets: how much of each limit it used and where its nested calls
 * spent their time. They are for the host (the service's `stats`, the
 * library's `stats`, the playground's timeline); what the model reads does
 * not change with them, since a limit crossed already says so in the run's
 * own text. Routed to whoever asked, by the run's callId.
 */
import type { SandboxUsage } from '../sandbox-runtime.ts';
import type { CodeModeLimits } from './limits.ts';

/** One nested call the run dispatched, in submission order. */
export interface NestedCallStats {
  callId: string;
  name: string;
  isError: boolean;
  /** When it started, ms after the run's scheduler began (just before the program): places the call on the run's time axis. */
  startMs: number;
  /** From the program submitting the call to its start, ms: its wait for a turn (`maxParallelCalls`, an exclusive call in flight). */
  queuedMs: number;
  /** From its start to its result being ready for the program, ms: the tool's body, its output, its wait for the calls before it to commit, post-execute hooks. */
  executeMs: number;
  /** UTF-8 bytes of the JSON of the value the program received, however the sandbox carried it; 0 for a failed call. */
  bytes: number;
}

/** How close a run came to its limits. */
export interface RunStats {
  /** The isolate's committed heap when the program ended, bytes; absent when the run ended with its isolate disposed (timeout, memory, a limit, cancellation) or did not start. */
  heapPeakBytes?: number;
  /** The heap the isolate may reach (`memoryMiB` and V8's young generation), bytes; with `heapPeakBytes`. */
  heapLimitBytes?: number;
  /** Bytes of log lines counted against `maxLogBytes` (UTF-8, a newline each). */
  logBytes: number;
  maxLogBytes: number;
  /** Bytes of the returned value's JSON; also when it was over the limit; 0 when nothing was returned. */
  resultBytes: number;
  maxResultBytes: number;
  /** Nested calls counted against `maxCalls` (a call refused for its argument's size is not). */
  calls: number;
  maxCalls: number;
  /** Each nested call the run dispatched (not those answered from a resumed run's journal, nor those the run's end left queued). */
  nestedCalls: NestedCallStats[];
}

export type RunStatsListener = (stats: RunStats) => void;

/** Makes a run's stats from what the sandbox measured and what the scheduler counted. */
export function runStatsOf(
  limits: Pick<CodeModeLimits, 'maxLogBytes' | 'maxResultBytes' | 'maxCalls'>,
  usage: SandboxUsage | undefined,
  calls: number,
  nestedCalls: NestedCallStats[],
): RunStats {
  const stats: RunStats = {
    logBytes: count(usage?.logBytes),
    maxLogBytes: limits.maxLogBytes,
    resultBytes: count(usage?.resultBytes),
    maxResultBytes: limits.maxResultBytes,
    calls: Math.min(calls, limits.maxCalls),
    maxCalls: limits.maxCalls,
    nestedCalls,
  };
  // Both or neither: a peak means little without the limit it is measured against.
  const peak = usage?.heapPeakBytes;
  const limit = usage?.heapLimitBytes;
  if (isCount(peak) && isCount(limit)) {
    stats.heapPeakBytes = peak;
    stats.heapLimitBytes = limit;
  }
  return stats;
}

/** Routes each run's stats to those watching its callId, as its log lines are routed. */
export class RunStatsRouter {
  readonly #listeners = new Map<string, Set<RunStatsListener>>();

  /** Hands `stats` of run `callId` to its listeners; a listener's failure never reaches the run. */
  report(callId: string, stats: RunStats): void {
    const listeners = this.#listeners.get(callId);
    if (listeners === undefined) return;
    for (const listener of listeners) {
      try {
        listener(stats);
      } catch {
        // The run has ended; whoever listened lost only its stats.
      }
    }
  }

  /** Calls `listener` with the stats of run `callId` when it ends. Returns unsubscribe. */
  watch(callId: string, listener: RunStatsListener): () => void {
    let listeners = this.#listeners.get(callId);
    if (listeners === undefined) this.#listeners.set(callId, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.#listeners.get(callId) === listeners) this.#listeners.delete(callId);
    };
  }
}

/** Rounds a duration to a hundredth of a millisecond, as `wallMs` is. */
export function roundMs(ms: number): number {
  return Math.round(ms * 100) / 100;
}

function isCount(value: number | undefined): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function count(value: number | undefined): number {
  return isCount(value) ? value : 0;
}
