/**
 * The messages between the parent and one sandbox child process, types only.
 * Program values stay JSON text end to end; the channel carries strings.
 */
import type { SandboxCallOutcome, SandboxLimits, SandboxRunOutcome } from '../../src/sandbox-runtime.ts';
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
}

/** Parent → child. */
export type ParentMessage =
  | { type: 'init'; runtimeModule: string; runtimeOptions: ChildRuntimeOptions }
  | {
      type: 'run';
      runId: number;
      code: string;
      filename?: string;
      toolNames: readonly string[];
      limits: SandboxLimits;
    }
  | { type: 'call-result'; runId: number; callSeq: number; outcome: SandboxCallOutcome }
  | { type: 'abort'; runId: number }
  | { type: 'ping'; seq: number };

/** Child → parent. */
export type ChildMessage =
  | { type: 'ready' }
  | { type: 'init-failed'; message: string }
  | { type: 'call'; runId: number; callSeq: number; name: string; argsJson: string }
  | { type: 'log'; runId: number; line: string }
  | { type: 'done'; runId: number; outcome: DoneOutcome }
  | { type: 'pong'; seq: number; rssBytes: number; budget?: ChildBudgetReport };

const childTypes = new Set(['ready', 'init-failed', 'call', 'log', 'done', 'pong']);

/**
 * A cheap shape check: the child hosts hostile programs, so the parent does not
 * act on a message it cannot read as one of ours.
 */
export function isChildMessage(message: unknown): message is ChildMessage {
  if (typeof message !== 'object' || message === null) return false;
  const { type, runId } = message as { type?: unknown; runId?: unknown };
  if (typeof type !== 'string' || !childTypes.has(type)) return false;
  if (type === 'call' || type === 'log' || type === 'done') return typeof runId === 'number';
  return true;
}
