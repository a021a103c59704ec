/**
 * The dispatch pipeline (docs/architecture.md, "Tools and the dispatch pipeline"), top to bottom:
 * admit → resolve → snapshot+freeze arguments → validate arguments → exec →
 * already aborted? → around-dispatch (wrappers → deadline → body → project
 * output) → commit order (nested) → post-execute → spill (outer) → `tool/result` event (outer) → result.
 * It never rejects: every failure is a result. Failures before the exec
 * exists (admission, unknown tool, invalid arguments) skip the hooks but are
 * still recorded; a request too malformed to name a call is neither.
 */
import { randomUUID } from 'node:crypto';
import { bindAgent, endAgent, isAgent } from './agent.ts';
import { abortedBefore, runAroundDispatch, type Call, type ToolEntry } from './around-dispatch.ts';
import { commitHold } from './commit-order.ts';
import type { EventSink, NewToolEvent } from './events.ts';
import type { HookLists } from './hooks.ts';
import { LossyJsonError, snapshotFrozenJson, type JsonObject, type JsonValue } from './json.ts';
import { runPostExecute } from './post-execute.ts';
import { bind, describeThrown, failure, isToken, newToken } from './results.ts';
import { spillResult, type SpillOptions } from './spill.ts';
import { nestedCallChannel, tracePhase, type TraceContext } from './tracing.ts';
import type { AgentHandle, DispatchRequest, DispatchToken, ToolExec, ToolExecutionResult } from './tool.ts';

/** What the pipeline needs from its registry. */
export interface DispatchEnv {
  lookup(name: string): ToolEntry | undefined;
  hooks(): HookLists;
  readonly eventSink: EventSink | undefined;
  readonly spill: SpillOptions | undefined;
  onSinkError(error: unknown, event: NewToolEvent): void;
}

/** A signal that never aborts: the default `exec.signal`. */
const NEVER: AbortSignal = new AbortController().signal;

interface Ids {
  name: string;
  callId: string;
  rootCallId: string;
  sessionId: string;
  /** The request named its session (else it is in session `default`). */
  sessionNamed: boolean;
  signal: AbortSignal;
  agent: AgentHandle | undefined;
  parent: DispatchToken | undefined;
  arguments: unknown;
  trace: TraceContext | undefined;
}

export async function dispatch(env: DispatchEnv, request: DispatchRequest): Promise<ToolExecutionResult> {
  const ids = readRequest(request);
  if (typeof ids === 'string') return failure('INVALID_ARGS', ids);
  let result: ToolExecutionResult;
  try {
    result = await run(env, ids);
  } catch (error) {
    // Only a bug in the pipeline lands here; the promise still resolves.
    result = failure('TOOL_FAILED', `internal error while dispatching ${JSON.stringify(ids.name)}: ${describeThrown(error).message}`, 'InternalError');
  }
  // The call has settled: nothing it injects from now on reaches the agent (nor lands after its tool/result).
  if (ids.agent !== undefined) endAgent(ids.agent);
  if (ids.parent === undefined && env.eventSink !== undefined) {
    const recording = record(env, env.eventSink, ids, result);
    if (recording !== undefined) await recording;
  }
  return result;
}

async function run(env: DispatchEnv, ids: Ids): Promise<ToolExecutionResult> {
  const outer = ids.parent === undefined;
  const hooks = env.hooks();
  const refusal = admit(hooks, ids.name, !outer);
  if (refusal !== undefined) return failure('UNKNOWN_TOOL', refusal);

  const entry = env.lookup(ids.name);
  if (entry === undefined) {
    return failure('UNKNOWN_TOOL', `no tool named ${JSON.stringify(ids.name)} is registered: call one of the listed tools by its exact name`);
  }

  let args: JsonObject;
  try {
    // Copied and frozen in one walk (a second walk only to freeze cost as much as the copy).
    const snap = snapshotFrozenJson(ids.arguments, 'arguments') as JsonValue;
    if (typeof snap !== 'object' || snap === null || Array.isArray(snap)) {
      return failure('INVALID_ARGS', `arguments of tool ${JSON.stringify(ids.name)} must be one JSON object, such as {}`);
    }
    args = snap as JsonObject;
  } catch (error) {
    const detail = error instanceof LossyJsonError ? `${error.violation.path}: ${error.violation.message}` : describeThrown(error).message;
    return failure('INVALID_ARGS', `arguments of tool ${JSON.stringify(ids.name)} are not lossless JSON: ${detail}`);
  }
  if (entry.validateArgs !== undefined) {
    const violations = entry.validateArgs(args);
    if (violations.length > 0) {
      return failure('INVALID_ARGS', `arguments of tool ${JSON.stringify(ids.name)} do not match its parameters: ${violations.join('; ')}`);
    }
  }

  const call: Call = { entry, exec: buildExec(ids, args), outer };
  // A nested call's phases go on the tracing channel only while someone listens.
  const traced = !outer && nestedCallChannel.hasSubscribers;
  let result: ToolExecutionResult;
  if (ids.signal.aborted) {
    result = bind(abortedBefore(ids.name), call.exec.token);
  } else if (traced) {
    result = await tracePhase('execute', call.exec, () => runAroundDispatch(call, hooks.execute));
    const held = commitHold(call.exec);
    if (held !== undefined) await tracePhase('commit-hold', call.exec, () => held);
  } else {
    result = await runAroundDispatch(call, hooks.execute);
    const held = outer ? undefined : commitHold(call.exec);
    if (held !== undefined) await held;
  }

  let valueReplaced = false;
  if (hooks.postExecute.length > 0) {
    const before = result;
    const pending = traced
      ? tracePhase('post-execute', call.exec, async () => runPostExecute(call, hooks.postExecute, before))
      : runPostExecute(call, hooks.postExecute, result);
    const outcome = pending instanceof Promise ? await pending : pending;
    result = outcome.result;
    valueReplaced = outcome.valueReplaced;
  }
  if (outer && env.spill !== undefined && !valueReplaced && !result.isError) {
    result = bind(await spillResult(env.spill, ids.sessionId, ids.callId, result), call.exec.token);
  }
  return result;
}

function buildExec(ids: Ids, args: JsonObject): ToolExec {
  const exec: {
    -readonly [K in keyof ToolExec]: ToolExec[K];
  } = {
    callId: ids.callId,
    rootCallId: ids.rootCallId,
    sessionId: ids.sessionId,
    name: ids.name,
    arguments: args,
    token: newToken(),
    signal: ids.signal,
  };
  if (ids.sessionNamed) exec.sessionNamed = true;
  if (ids.agent !== undefined) exec.agent = ids.agent;
  if (ids.parent !== undefined) exec.parent = ids.parent;
  if (ids.trace !== undefined) exec.trace = ids.trace;
  return Object.freeze(exec);
}

function admit(hooks: HookLists, name: string, nested: boolean): string | undefined {
  for (const hook of hooks.admit) {
    let refusal: unknown;
    try {
      refusal = hook({ name, nested });
    } catch (error) {
      return `tool ${JSON.stringify(name)} could not be admitted (a tools/admit hook threw: ${describeThrown(error).message})`;
    }
    if (typeof refusal === 'string') return refusal === '' ? `tool ${JSON.stringify(name)} is not callable here` : refusal;
  }
  return undefined;
}

/** Reads and checks the request; returns the ids, or a message saying what is wrong. */
function readRequest(request: DispatchRequest): Ids | string {
  try {
    if (typeof request !== 'object' || request === null) return 'dispatch needs a request object such as { name, arguments: {} }';
    const { name, callId, rootCallId, sessionId, signal, agent, parent, trace } = request;
    if (typeof name !== 'string') return 'request.name must be the tool name, a string';
    if (callId !== undefined && (typeof callId !== 'string' || callId === '')) return 'request.callId must be a non-empty string (or omitted)';
    if (rootCallId !== undefined && (typeof rootCallId !== 'string' || rootCallId === '')) {
      return 'request.rootCallId must be a non-empty string (or omitted)';
    }
    if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId === '')) {
      return 'request.sessionId must be a non-empty string (or omitted)';
    }
    if (signal !== undefined && !(signal instanceof AbortSignal)) return 'request.signal must be an AbortSignal (or omitted)';
    if (parent !== undefined && !isToken(parent)) return 'request.parent must be the enclosing call’s exec.token (or omitted)';
    if (agent !== undefined && !isAgent(agent)) return 'request.agent must be an object with an inject(context, origin) method (or omitted)';
    const traceContext = trace === undefined ? undefined : readTrace(trace);
    if (typeof traceContext === 'string') return traceContext;
    const id = callId ?? randomUUID();
    const root = rootCallId ?? id;
    const session = sessionId ?? 'default';
    return {
      name,
      callId: id,
      rootCallId: root,
      sessionId: session,
      sessionNamed: sessionId !== undefined,
      signal: signal ?? NEVER,
      agent: agent === undefined ? undefined : bindAgent(agent, { sessionId: session, rootCallId: root, callId: id, name }),
      parent,
      arguments: request.arguments,
      trace: traceContext,
    };
  } catch (error) {
    return `the dispatch request could not be read: ${describeThrown(error).message}`;
  }
}

/** A frozen copy of `request.trace` (its string fields only), or what is wrong with it. */
function readTrace(trace: unknown): TraceContext | string {
  if (typeof trace !== 'object' || trace === null) return 'request.trace must be an object such as { traceparent } (or omitted)';
  const { traceparent, tracestate, tenant } = trace as Record<string, unknown>;
  const copy: { -readonly [K in keyof TraceContext]: TraceContext[K] } = {};
  for (const [key, value] of [['traceparent', traceparent], ['tracestate', tracestate], ['tenant', tenant]] as const) {
    if (value === undefined) continue;
    if (typeof value !== 'string') return `request.trace.${key} must be a string (or omitted)`;
    copy[key] = value;
  }
  return Object.freeze(copy);
}

/**
 * Appends the outer call's `tool/result` (never its value) and waits until
 * the sink has it durably. A sink failure does not change the result: the
 * caller still gets it, and `onSinkError` hears about the lost event.
 */
function record(env: DispatchEnv, sink: EventSink, ids: Ids, result: ToolExecutionResult): Promise<void> | undefined {
  const event: NewToolEvent = {
    type: 'tool/result',
    sessionId: ids.sessionId,
    callId: ids.callId,
    name: ids.name,
    isError: result.isError,
    content: result.content,
  };
  if (result.isError) event.error = result.error;
  if (result.meta !== undefined) event.meta = result.meta as JsonValue;
  if (result.additionalContexts !== undefined) event.additionalContexts = result.additionalContexts;
  let appended: unknown;
  try {
    appended = sink.append(event);
  } catch (error) {
    sinkFailed(env, error, event);
    return undefined;
  }
  // The common in-memory case stays synchronous: nothing to wait for.
  if (!(appended instanceof Promise) && sink.flush === undefined) return undefined;
  return settle(env, sink, appended, event);
}

async function settle(env: DispatchEnv, sink: EventSink, appended: unknown, event: NewToolEvent): Promise<void> {
  try {
    if (appended instanceof Promise) await appended;
    if (sink.flush !== undefined) await sink.flush(event.sessionId);
  } catch (error) {
    sinkFailed(env, error, event);
  }
}

function sinkFailed(env: DispatchEnv, error: unknown, event: NewToolEvent): void {
  try {
    env.onSinkError(error, event);
  } catch {
    // A reporter that throws must not turn a finished call into a rejection.
  }
}
