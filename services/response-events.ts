/**
 * How much of a call's events its HTTP response carries (`?events=` on
 * POST /v1/run). Every nested call's event holds its rendered content, so a
 * large run's response would repeat its whole session log; by default it
 * carries a summary of each event, and the content stays in the session log
 * (GET /v1/sessions/:id/events).
 */
import type { ToolEvent } from '../src/events.ts';
import type { CallResponse } from './call-runner.ts';

export const EVENT_DETAILS = ['none', 'summary', 'full'] as const;
export type EventDetail = (typeof EVENT_DETAILS)[number];
export const DEFAULT_EVENT_DETAIL: EventDetail = 'summary';

/** An event without its content, arguments, error or contexts. */
export interface EventSummary {
  type: ToolEvent['type'];
  sessionId: string;
  seq: number;
  at: string;
  callId: string;
  rootCallId?: string;
  parentCallId?: string;
  /** The tool's name (absent on the run's own run/* events). */
  name?: string;
  isError?: boolean;
}

export type DetailedCallResponse = Omit<CallResponse, 'events'> & { events: ToolEvent[] | EventSummary[] };

export function summarizeEvent(event: ToolEvent): EventSummary {
  const summary: EventSummary = { type: event.type, sessionId: event.sessionId, seq: event.seq, at: event.at, callId: event.callId };
  if ('name' in event) summary.name = event.name;
  if ('rootCallId' in event) summary.rootCallId = event.rootCallId;
  if ('parentCallId' in event) summary.parentCallId = event.parentCallId;
  if ('isError' in event) summary.isError = event.isError;
  return summary;
}

export function withEventDetail(body: CallResponse, detail: EventDetail): DetailedCallResponse {
  if (detail === 'full') return body;
  return { ...body, events: detail === 'none' ? [] : body.events.map(summarizeEvent) };
}
