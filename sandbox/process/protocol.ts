/**
 * The messages between the parent and one sandbox child process, types only.
 * Program values stay JSON text end to end; the channel carries strings.
 */
import type { SandboxLimits, SandboxRunOutcome } from '../../src/sandbox-runtime.ts';
import type { CallReply } from '../crossing/protocol.ts';
import type { InProcessRuntimeOptions } from '../in-process-runtime.ts';

/**
 * A run's outcome as `done` carries it: without its logs. Every line already
 * crossed in its own `log` message, and IPC keeps order, so the parent
 * rebuilds the list from those and each line crosses once.
 */
export type DoneOutcome = SandboxRunOutcome extends infer O ? (O extends unknown ? Omit<O, 'logs'> : never) : never;

/** What each child passes to its runtime factory: the in-process runtime's options, sent as JSON. */
export type ChildRuntimeOptions = InProcessRuntimeOptions;

/** The child runtime's budget figures, sent with each heartbeat answer. */
export interface ChildBudgetReport {
  usedBytes: number;
  runs: number;
  stopped: number;
  /** Runs that reused an isolate of their session (SandboxPoolStatus.isolatesReused). */
  reused: number;
  /** The isolates it keeps for sessions, bytes (SandboxPoolStatus.keptIsolateBytes). */
  keptBytes: number;
}

/**
 * Messages sent within one turn of the event loop after its first travel as
 * one `batch` (each side's `Outbox`): a burst admits hundreds of runs and answers
 * hundreds of calls per turn, and each IPC message costs a serialisation
 * call and a write of its own. Order is kept: a batch holds the messages in
 * the order they were sent, and nothing overtakes it.
 */
export type Batch<M> = { type: 'batch'; messages: M[] };

/** Parent → child (one, or a `Batch` of them). */
export type ParentMessage =
  | { type: 'init'; runtimeModule: string; runtimeOptions: ChildRuntimeOptions }
  | {
      type: 'run';
      runId: number;
      code: string;
      filename?: string;
      sessionId?: string;
      toolNames: readonly string[];
      limits: SandboxLimits;
      /** SandboxRunRequest.recordReads. */
      recordReads?: { replay: readonly number[] };
    }
  | { type: 'call-result'; runId: number; callSeq: number; outcome: WireCallOutcome }
  | { type: 'abort'; runId: number }
  | { type: 'ping'; seq: number }
  /** A thread child's cue to leave (a process child leaves when its IPC channel closes). */
  | { type: 'leave' };

/** Child → parent (one, or a `Batch` of them). */
export type ChildMessage =
  | { type: 'ready' }
  | { type: 'init-failed'; message: string }
  /** `readsJson`: the reads a recording run made before this call (SandboxRunRequest.callTool). */
  | { type: 'call'; runId: number; callSeq: number; name: string; argsJson: string; readsJson?: string }
  | { type: 'log'; runId: number; line: string }
  | { type: 'started'; runId: number }
  | { type: 'done'; runId: number; outcome: DoneOutcome }
  | { type: 'pong'; seq: number; rssBytes: number; budget?: ChildBudgetReport };

const childTypes = new Set(['ready', 'init-failed', 'call', 'log', 'started', 'done', 'pong']);

/**
 * Sends the first message of a turn at once (a lone message, such as a
 * sequential program's next call, waits for nothing), and what the rest of
 * the turn queues as one message at its end. `write` sends one message; its
 * callback reports a failed send of anything in it.
 */
export class Outbox<M> {
  #queued: M[] = [];
  #turnOpen = false;
  readonly #write: (message: M | Batch<M>) => void;

  constructor(write: (message: M | Batch<M>) => void) {
    this.#write = write;
  }

  send(message: M): void {
    if (this.#turnOpen) {
      this.#queued.push(message);
      return;
    }
    this.#turnOpen = true;
    // setImmediate, not a microtask: the calls and replies of a burst arrive over one poll phase, each in a callback of its own.
    setImmediate(() => {
      this.flush();
      this.#turnOpen = false;
    });
    this.#write(message);
  }

  /** Sends what is queued now. */
  flush(): void {
    const queued = this.#queued;
    if (queued.length === 0) return;
    this.#queued = [];
    this.#write(queued.length === 1 ? (queued[0] as M) : { type: 'batch', messages: queued });
  }
}

/** The messages in what arrived: a batch's, in order, or the message itself. */
export function unbatch(message: unknown): unknown[] {
  if (typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'batch') {
    const { messages } = message as { messages?: unknown };
    return Array.isArray(messages) ? messages : [];
  }
  return [message];
}

/**
 * A cheap shape check: the child hosts hostile programs, so the parent does not
 * act on a message it cannot read as one of ours.
 */
export function isChildMessage(message: unknown): message is ChildMessage {
  if (typeof message !== 'object' || message === null) return false;
  const { type, runId } = message as { type?: unknown; runId?: unknown };
  if (typeof type !== 'string' || !childTypes.has(type)) return false;
  if (type === 'call' || type === 'log' || type === 'started' || type === 'done') return typeof runId === 'number';
  return true;
}

/** A nested call's outcome on the channel: a value goes as its JSON text (cheaper to send than the object). */
export type WireCallOutcome = Exclude<CallReply, { value: unknown }>;

export function toWire(outcome: CallReply): WireCallOutcome {
  if (!outcome.ok || !('value' in outcome)) return outcome;
  const valueJson = JSON.stringify(outcome.value);
  outcome.onDelivered?.(Buffer.byteLength(valueJson));
  return { ok: true, valueJson };
}
