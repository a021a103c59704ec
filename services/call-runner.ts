/**
 * One outer call as the HTTP routes make it: dispatch through the registry
 * with a cancellable signal, observe the call's events (and live log lines)
 * as they are appended, and shape the response body.
 */
import { performance } from 'node:perf_hooks';
import { createEventAgent } from '../src/event-agent.ts';
import type { TraceContext } from '../src/tracing.ts';
import type { ToolEvent } from '../src/events.ts';
import { contextsOfEvents, type RunContext } from '../src/run-contexts.ts';
import type { JsonValue } from '../src/json.ts';
import type { Agent, ToolErrorInfo, ToolExecutionResult, ToolRegistry } from '../src/tool.ts';
import type { ContentBlock } from '../src/content.ts';
import type { PtcMetrics, RunKind } from './metrics.ts';
import type { LogRouter } from './log-router.ts';
import type { TrackedRun } from './run-tracker.ts';
import { rootOf, type EventListener, type EventPage, type SessionEventReader } from './session-store.ts';

/** The body of POST /v1/run and POST /v1/tools/:name (and the SSE `result` event). */
export interface CallResponse {
  callId: string;
  sessionId: string;
  isError: boolean;
  value?: JsonValue;
  content: ContentBlock[];
  error?: { message: string; info?: ToolErrorInfo };
  meta?: JsonValue;
  events: ToolEvent[];
  /** Present when a run paused for approval: `{ callId, pending: [{ seq, toolName, args }], expiresAt }` (also in `value.paused`). */
  paused?: JsonValue;
  /**
   * What the call produced for the next model request, from its durable
   * events: injects (`agent/context`) in order, then the contexts on its
   * result. Absent when there are none.
   */
  contexts?: RunContext[];
  stats: { wallMs: number; calls: number };
  /**
   * Present when some of the session's events could not be stored while the
   * call ran (a full disk, a failing database): `events` then lists events
   * the log does not hold.
   */
  eventsLost?: { code: 'EVENT_LOG_FAILED'; reason: string; message: string };
}

/** What the routes need of a session store: reading, and (for live events) watching. */
export type SessionSource = SessionEventReader & {
  watch?(rootCallId: string, listener: EventListener): () => void;
  /** Wakes `onWake` whenever events of the session became durable (live follow). */
  followSession?(sessionId: string, onWake: () => void): () => void;
  /** Appends or flushes of the session that failed so far (a store from `createSessionStore` has it). */
  losses?(sessionId: string): { count: number; reason?: string };
};

export interface CallDeps {
  registry: ToolRegistry;
  sessions: SessionSource;
  metrics?: PtcMetrics;
  /** Live log lines; without it a stream gets a run's logs at the end. */
  logs?: Pick<LogRouter, 'watch'>;
}

export interface CallRequest {
  kind: RunKind;
  name: string;
  arguments: unknown;
  sessionId: string;
  run: TrackedRun;
  /** Runs the call instead of dispatching `name` (a decision resuming a paused run). */
  dispatch?(signal: AbortSignal): Promise<ToolExecutionResult>;
  /** The caller's trace context and tenant, for tracers (services/trace-context.ts). */
  trace?: TraceContext;
}

export interface CallObserver {
  onEvent?(event: ToolEvent): void;
  onLog?(line: string): void;
}

export async function executeCall(deps: CallDeps, request: CallRequest, observer: CallObserver = {}): Promise<CallResponse> {
  const { registry, sessions, metrics } = deps;
  const { run, sessionId } = request;
  const callId = run.callId;
  const events: ToolEvent[] = [];
  let calls = 0;
  // Events and log lines are delivered in the order they happened, even when
  // the sink hands back an event as a promise (session file still opening).
  let queue: Promise<void> = Promise.resolve();
  let pending = 0;
  const deliver = <T>(item: T | Promise<T>, handle: (value: T) => void): void => {
    if (pending === 0 && !(item instanceof Promise)) return handle(item);
    pending++;
    queue = queue
      .then(() => item)
      .then(handle, () => undefined)
      .finally(() => pending--);
  };
  const onEvent = (event: ToolEvent) => {
    if (event.sessionId !== sessionId) return;
    events.push(event);
    if (event.type === 'tool/ptc-dispatch') {
      calls++;
      metrics?.nestedCall(event.name, event.isError ? (event.error?.code ?? 'error') : 'ok');
    }
    observer.onEvent?.(event);
  };
  const unwatch = sessions.watch?.(callId, (event) => deliver(event, onEvent));
  const onLog = observer.onLog;
  const unwatchLogs = onLog === undefined ? undefined : deps.logs?.watch(callId, (line) => deliver(line, onLog));
  const lossesBefore = sessions.losses?.(sessionId).count ?? 0;
  metrics?.runStarted();
  const started = performance.now();
  let result: ToolExecutionResult;
  try {
    result =
      request.dispatch !== undefined
        ? await request.dispatch(run.signal)
        : await registry.dispatch({
            name: request.name,
            arguments: request.arguments,
            callId,
            sessionId,
            signal: run.signal,
            ...agentOf(registry),
            ...(request.trace === undefined ? {} : { trace: request.trace }),
          });
  } finally {
    unwatch?.();
    unwatchLogs?.();
    await queue;
  }
  const wallMs = Math.round((performance.now() - started) * 100) / 100;
  metrics?.runFinished(request.kind, result, wallMs / 1000);
  if (unwatch === undefined) {
    // Page through the session (never the whole log at once) for this call's events.
    for (let after: number | undefined = 0; after !== undefined; ) {
      const page: EventPage = await sessions.readPage(sessionId, { after });
      for (const event of page.events) if (event.type !== 'log/gap' && rootOf(event) === callId) events.push(event);
      after = page.next;
    }
    calls = events.filter((event) => event.type === 'tool/ptc-dispatch').length;
  }
  const body: CallResponse = { callId, sessionId, isError: result.isError, content: result.content, events, stats: { wallMs, calls } };
  if (result.isError) body.error = result.error;
  else {
    body.value = result.value;
    const paused = pausedOf(result.value);
    if (paused !== undefined) body.paused = paused;
  }
  if (result.meta !== undefined) body.meta = result.meta;
  const contexts = contextsOfEvents(events);
  if (contexts.length > 0) body.contexts = contexts;
  const losses = sessions.losses?.(sessionId);
  if (losses !== undefined && losses.count > lossesBefore) {
    const reason = losses.reason ?? 'EVENT_LOG_FAILED';
    body.eventsLost = {
      code: 'EVENT_LOG_FAILED',
      reason,
      message: `some events of this session could not be stored while the call ran (${reason}): the session log lacks them; the result itself is complete`,
    };
  }
  return body;
}

/** run_code's `paused` member, when its run paused. */
function pausedOf(value: JsonValue): JsonValue | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value.paused : undefined;
}

/**
 * The session's agent for one call: each `exec.agent.inject` becomes an
 * `agent/context` event in the session log (capped like every event), which
 * the response then returns in `contexts`. The registry drops an inject made
 * after its call settled, so a finished run gets no more events.
 */
function agentOf(registry: ToolRegistry): { agent: Agent } | Record<string, never> {
  const sink = registry.eventSink;
  if (sink === undefined) return {};
  return { agent: createEventAgent(sink, (error, event) => registry.reportSinkError?.(error, event)) };
}
