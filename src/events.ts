/**
 * Durable events (DESIGN §6). Only presentation is durable: no event ever
 * holds a canonical value or (for nested calls) presentation metadata.
 */
import type { ContentBlock } from './content.ts';
import type { JsonValue } from './json.ts';
import type { ToolErrorInfo } from './tool.ts';

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
export type ToolEvent = ToolResultEvent | PtcDispatchStartEvent | PtcDispatchEvent;

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
