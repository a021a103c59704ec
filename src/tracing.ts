/**
 * The tracing channels ptc-executor publishes on (`node:diagnostics_channel` TracingChannels) and
 * the messages they carry (docs/architecture.md, "Tracing channels"). A tracer subscribes (the
 * `ptc-executor/otel` entry does); while no one does, the publishers check `hasSubscribers` and
 * build nothing. Messages are plain objects: this module knows no tracer.
 *
 * Each traced operation publishes `start` when it begins, `end` right after (synchronously), and
 * `asyncStart`/`asyncEnd` when it is over, with `error` before them when it threw; every event of
 * one operation carries the same message object, so a subscriber may key its span on it. Where the
 * work runs code of others (a run, a tool's body, an upstream request), a subscriber may set
 * `within` in `start`: the work then runs inside it (a tracer makes its span the active one).
 */
import { tracingChannel, type TracingChannel } from 'node:diagnostics_channel';
import type { SandboxCallOutcome } from './sandbox-runtime.ts';
import type { ToolExec } from './tool.ts';

export const RUN_CHANNEL = 'ptc:run';
export const NESTED_CALL_CHANNEL = 'ptc:nested-call';
export const TYPECHECK_CHANNEL = 'ptc:typecheck';
export const TOOL_SOURCE_CHANNEL = 'ptc:tool-source';

/**
 * Who asked for an outer call, for tracers only (`DispatchRequest.trace`, then `exec.trace`):
 * the incoming W3C trace context and the tenant. ptc-executor never acts on it.
 */
export interface TraceContext {
  /** The W3C `traceparent` of the request that caused the call. */
  readonly traceparent?: string;
  readonly tracestate?: string;
  /** The tenant the call runs for (the service's named token). */
  readonly tenant?: string;
}

/** Set by a subscriber in `start`: runs the traced work, such as inside its span's context. */
export type Within = <T>(work: () => T) => T;

/** `ptc:run`: one run_code run, from its type-check until its last nested call settled. */
export interface RunMessage {
  readonly callId: string;
  readonly rootCallId: string;
  readonly sessionId: string;
  readonly trace: TraceContext | undefined;
  /** UTF-8 bytes of the program. */
  readonly bytesIn: number;
  /** Set when the run ends: nested calls submitted. */
  calls?: number;
  /** Set when the run returned: UTF-8 bytes of its result's JSON (0 without one). */
  bytesOut?: number;
  /** Set by the channel when the run failed (a `PtcError` with its `code`). */
  error?: unknown;
  within?: Within;
}

/**
 * The phases of a nested call. `call` spans all of it, from submission to the answer the program
 * gets; within it `queued` (only when the call waited for its turn to start), `execute` (hooks,
 * deadline, body, output projection), `commit-hold` (only when it finished before the call
 * submitted ahead of it had settled) and `post-execute` (only when hooks are registered).
 */
export type NestedCallPhase = 'call' | 'queued' | 'execute' | 'commit-hold' | 'post-execute';

/** `ptc:nested-call`: one phase of one nested call; the phases of a call share its `callId`. */
export interface NestedCallMessage {
  readonly phase: NestedCallPhase;
  readonly callId: string;
  readonly rootCallId: string;
  readonly sessionId: string;
  /** The tool called. */
  readonly name: string;
  /** Phase `call`: the run that made it. */
  readonly runCallId?: string;
  /** Phase `call`: UTF-8 bytes of the argument JSON. */
  readonly bytesIn?: number;
  /** Phase `call`, set before it ends: the call failed, and with which code. */
  isError?: boolean;
  errorCode?: string;
  /** Phase `call`, set before it ends once the sandbox delivered the value: UTF-8 bytes of the value JSON the program got. */
  bytesOut?: number;
  /** Honoured by the `execute`, `commit-hold` and `post-execute` phases. */
  within?: Within;
}

/** `ptc:typecheck`: the type-check of a run's program. */
export interface TypecheckMessage {
  /** The run's callId. */
  readonly callId: string;
  readonly sessionId: string;
  readonly mode: 'warn' | 'enforce';
  error?: unknown;
}

/** `ptc:tool-source`: one request a tool source makes upstream (an MCP `tools/call`, an OpenAPI HTTP request). */
export interface ToolSourceMessage {
  readonly kind: 'mcp' | 'openapi';
  /** The dispatch whose body makes the request (a nested call's `<run>:ptc:<n>`, or an outer call). */
  readonly callId: string;
  /** The registered tool name. */
  readonly tool: string;
  /** MCP: the server's configured name; OpenAPI: the request's origin. */
  readonly server: string;
  /** MCP: the tool's name on the server; OpenAPI: the method and path template, `GET /pets/{id}`. */
  readonly operation: string;
  /**
   * Trace headers a subscriber may add in `start`, before the request leaves: HTTP headers on an
   * OpenAPI request, `_meta` entries on an MCP call.
   */
  readonly carrier: Record<string, string>;
  /** OpenAPI: the HTTP status of the last response, when one came. */
  status?: number;
  error?: unknown;
  within?: Within;
}

export const runChannel: TracingChannel<unknown, RunMessage> = tracingChannel(RUN_CHANNEL);
export const nestedCallChannel: TracingChannel<unknown, NestedCallMessage> = tracingChannel(NESTED_CALL_CHANNEL);
export const typecheckChannel: TracingChannel<unknown, TypecheckMessage> = tracingChannel(TYPECHECK_CHANNEL);
export const toolSourceChannel: TracingChannel<unknown, ToolSourceMessage> = tracingChannel(TOOL_SOURCE_CHANNEL);

/** Traces `work` on `channel` with `message`, inside the message's `within` when a subscriber set one (the caller checked `hasSubscribers`). */
export function traceWithin<M extends { within?: Within }, T>(channel: TracingChannel<unknown, M>, message: M, work: () => Promise<T>): Promise<T> {
  return channel.tracePromise(() => (message.within === undefined ? work() : message.within(work)), message);
}

/** Traces one phase of a nested call around `body` (the caller checked `hasSubscribers`). */
export function tracePhase<T>(phase: NestedCallPhase, exec: ToolExec, body: () => Promise<T>): Promise<T> {
  return traceWithin(nestedCallChannel, { phase, callId: exec.callId, rootCallId: exec.rootCallId, sessionId: exec.sessionId, name: exec.name }, body);
}

/**
 * Opens a phase that is not one promise (`queued`: it ends when the scheduler starts the call);
 * `endPhase` closes it. Published as `tracePromise` would, so subscribers see one shape.
 */
export function startPhase(message: NestedCallMessage): NestedCallMessage {
  nestedCallChannel.start.publish(message);
  nestedCallChannel.end.publish(message);
  return message;
}

export function endPhase(message: NestedCallMessage): void {
  nestedCallChannel.asyncStart.publish(message);
  nestedCallChannel.asyncEnd.publish(message);
}

/**
 * Traces a nested call's `call` phase around `submit` (the caller checked `hasSubscribers`): it
 * ends when the program has its answer. A failure ends it at once; a value once the sandbox
 * delivers it (its `onDelivered` gives the bytes, already counted there, so the value is not
 * stringified again for the tracer), or at {@link endUndelivered} should that never come.
 * `undelivered` holds the run's calls still open.
 */
export function traceCall(message: NestedCallMessage, undelivered: Set<NestedCallMessage>, submit: () => Promise<SandboxCallOutcome>): Promise<SandboxCallOutcome> {
  undelivered.add(message);
  const submitted = nestedCallChannel.start.runStores(message, () => {
    try {
      return submit();
    } finally {
      nestedCallChannel.end.publish(message);
    }
  });
  return submitted.then((outcome) => {
    if (!outcome.ok) {
      message.isError = true;
      message.errorCode = 'error' in outcome ? outcome.error.code : outcome.fatal.kind;
      endCall(message, undelivered);
      return outcome;
    }
    const delivered = outcome.onDelivered;
    return {
      ok: true,
      value: outcome.value,
      onDelivered(bytes: number): void {
        delivered?.(bytes);
        message.bytesOut = bytes;
        endCall(message, undelivered);
      },
    };
  });
}

/** Ends the calls of `undelivered` whose value never reached the program (the run ended first). */
export function endUndelivered(undelivered: Set<NestedCallMessage>): void {
  for (const message of undelivered) endCall(message, undelivered);
}

function endCall(message: NestedCallMessage, undelivered: Set<NestedCallMessage>): void {
  if (!undelivered.delete(message)) return;
  nestedCallChannel.asyncStart.publish(message);
  nestedCallChannel.asyncEnd.publish(message);
}
