/**
 * Durable events (docs/architecture.md, "The durable log"). Only presentation is durable: no event ever
 * holds a canonical value or (for nested calls) presentation metadata.
 */
import type { ContentBlock } from './content.ts';
import type { JsonValue } from './json.ts';
import type { HookContext, InjectedContext, ToolErrorInfo } from './tool.ts';

interface EventEnvelope {
  sessionId: string;
  /** Monotonic per session, from 1; assigned by the sink. */
  seq: number;
  /** ISO-8601 time the sink accepted the event. */
  at: string;
}

export interface ToolResultEvent extends EventEnvelope {
  type: 'tool/result';
  callId: string;
  name: string;
  isError: boolean;
  content: ContentBlock[];
  error?: { message: string; info?: ToolErrorInfo };
  meta?: JsonValue;
  /**
   * Contexts post-execute hooks attached to the result (for run_code, also
   * those attached to its nested calls), content as blocks: presentation for
   * the next model request.
   */
  additionalContexts?: HookContext[];
}
export interface PtcDispatchStartEvent extends EventEnvelope {
  type: 'tool/ptc-dispatch-start';
  rootCallId: string;
  parentCallId: string;
  callId: string;
  name: string;
  arguments: JsonValue;
}
export interface PtcDispatchEvent extends EventEnvelope {
  type: 'tool/ptc-dispatch';
  rootCallId: string;
  parentCallId: string;
  callId: string;
  name: string;
  isError: boolean;
  content: ContentBlock[];
  error?: ToolErrorInfo;
}
/**
 * Context a tool appended with `exec.agent.inject` for the next model
 * request, written while the injecting call ran (so always before the
 * `tool/result` of its outer call).
 */
export interface AgentContextEvent extends EventEnvelope {
  type: 'agent/context';
  /** The outer call the injecting call belongs to. */
  rootCallId: string;
  /** The call that injected: the outer call itself, or a nested call of its program. */
  callId: string;
  /** The injecting tool. */
  name: string;
  content: InjectedContext['content'];
  source: InjectedContext['source'];
}
/** A run paused: a call needs approval (docs/architecture.md, "Durable runs"). Its `tool/result` follows. */
export interface RunPausedEvent extends EventEnvelope {
  type: 'run/paused';
  /** The run (run_code's callId). */
  callId: string;
  /** The run's callId again (every event but `tool/result` names its run so). */
  rootCallId: string;
  /** The gated calls waiting, by submission number (arguments stay in the journal). */
  pending: { seq: number; toolName: string }[];
  /** ISO-8601 time after which the gated call is denied `expired`. */
  expiresAt: string;
}
/** A decision resumed a paused run: the resumed run's events and `tool/result` follow. */
export interface RunResumedEvent extends EventEnvelope {
  type: 'run/resumed';
  callId: string;
  /** The run's callId again (every event but `tool/result` names its run so). */
  rootCallId: string;
  decision: 'approve' | 'deny';
  by?: string;
  reason?: string;
}
/** A rollback reverted a run's applied calls (newest first), and says which it could not. */
export interface RunRevertedEvent extends EventEnvelope {
  type: 'run/reverted';
  callId: string;
  /** The run's callId again (every event but `tool/result` names its run so). */
  rootCallId: string;
  reverted: { seq: number; toolName: string }[];
  notReverted: { seq: number; toolName: string; reason: string }[];
}
export type ToolEvent = ToolResultEvent | PtcDispatchStartEvent | PtcDispatchEvent | AgentContextEvent | RunPausedEvent | RunResumedEvent | RunRevertedEvent;

/**
 * Written by a durable sink in place of events it could not store (a write
 * failed: disk full, read-only folder, …). It takes the `seq` of the last
 * lost event, so seqs stay increasing and paging by `after` still works;
 * `fromSeq`..`toSeq` are the events that are missing.
 */
export interface LogGapEvent {
  type: 'log/gap';
  sessionId: string;
  seq: number;
  at: string;
  fromSeq: number;
  toSeq: number;
  /** The system error code of the failure, such as `ENOSPC`, or `EVENT_LOG_FAILED`. */
  code: string;
  message: string;
}

/** What a session log holds: the tool events, and gaps where events were lost. */
export type SessionLogEvent = ToolEvent | LogGapEvent;

/** Where a session log stops being readable: the events before it are served, nothing after it. */
export interface LogDamage {
  /** Byte offset of the first line that is not an event. */
  offset: number;
  /** The seq of the last good event before it (0: none). */
  afterSeq: number;
  message: string;
}

/** One page of a session's events (`seq > after`, in order). */
export interface EventPage {
  events: SessionLogEvent[];
  /** Pass as `after` to get the next page; absent when this page reaches the end. */
  next?: number;
  /** Present when the log is damaged after the events served. */
  damage?: LogDamage;
}

export interface ReadPageOptions {
  /** Only events with `seq` greater than this. Default 0. */
  after?: number;
  /** Events per page. Default 100. */
  limit?: number;
  /** Stop the page once its events' JSON passes this many bytes (at least one event is served). Default 8 MiB. */
  maxBytes?: number;
}

export const DEFAULT_PAGE_LIMIT = 100;
export const DEFAULT_PAGE_BYTES = 8 * 1024 * 1024;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event before the sink stamps it with `seq` and `at`. */
export type NewToolEvent = DistributiveOmit<ToolEvent, 'seq' | 'at'>;

/**
 * Where events go. `append` keeps call order per session and returns the
 * stamped event. `flush(sessionId)` resolves once everything appended for
 * that session is durable (the registry awaits it before an outer dispatch
 * returns).
 */
export interface EventSink {
  append(event: NewToolEvent): ToolEvent | Promise<ToolEvent>;
  flush?(sessionId: string): Promise<void>;
}
