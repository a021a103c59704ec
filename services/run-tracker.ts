/**
 * Outer calls in flight: one AbortController per callId (for DELETE
 * /v1/runs/:callId, client disconnects and shutdown), and a count per client
 * for the concurrency cap.
 */
import { PtcError } from '../src/errors.ts';
import { HttpError } from './http-errors.ts';

export interface RunTrackerOptions {
  /** Outer calls in flight per client key. Default 32; past it `begin` throws 429 `TOO_MANY_RUNS`. */
  maxPerClient?: number;
}

export interface TrackedRun {
  readonly callId: string;
  readonly signal: AbortSignal;
  /** Aborts this run (a disconnect, a DELETE). */
  cancel(reason: string): void;
  /** Releases the callId and the client's slot. Idempotent. */
  end(): void;
}

export interface RunTracker {
  /** `shownAs`: the callId as the client named it (without a tenant prefix), for messages. Default `callId`. */
  begin(callId: string, client: string, shownAs?: string): TrackedRun;
  /** Cancels a running call; false when no such call is running. */
  cancel(callId: string, reason: string): boolean;
  cancelAll(reason: string): void;
  readonly size: number;
  /** Resolves when no call is in flight. */
  idle(): Promise<void>;
}

export function createRunTracker(options: RunTrackerOptions = {}): RunTracker {
  const maxPerClient = options.maxPerClient ?? 32;
  const runs = new Map<string, AbortController>();
  const perClient = new Map<string, number>();
  let waiters: (() => void)[] = [];

  const abort = (controller: AbortController, reason: string) => {
    if (!controller.signal.aborted) controller.abort(new PtcError('ABORTED', reason));
  };

  return {
    begin(callId, client, shownAs = callId) {
      if (runs.has(callId)) {
        throw new HttpError('CALL_ID_IN_USE', `a call with callId "${shownAs}" is already running: use a fresh callId or omit it`);
      }
      const count = perClient.get(client) ?? 0;
      if (count >= maxPerClient) {
        throw new HttpError(
          'TOO_MANY_RUNS',
          `this client already has ${count} runs in flight (the cap is ${maxPerClient}): wait for one to finish`,
          { 'retry-after': '1' },
        );
      }
      const controller = new AbortController();
      runs.set(callId, controller);
      perClient.set(client, count + 1);
      let ended = false;
      return {
        callId,
        signal: controller.signal,
        cancel: (reason) => abort(controller, reason),
        end() {
          if (ended) return;
          ended = true;
          runs.delete(callId);
          const left = (perClient.get(client) ?? 1) - 1;
          if (left === 0) perClient.delete(client);
          else perClient.set(client, left);
          if (runs.size === 0) {
            const done = waiters;
            waiters = [];
            for (const resolve of done) resolve();
          }
        },
      };
    },
    cancel(callId, reason) {
      const controller = runs.get(callId);
      if (controller === undefined || controller.signal.aborted) return false;
      abort(controller, reason);
      return true;
    },
    cancelAll(reason) {
      for (const controller of runs.values()) abort(controller, reason);
    },
    get size() {
      return runs.size;
    },
    idle() {
      if (runs.size === 0) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}
