/**
 * `instrument()`: OpenTelemetry spans made from ptc-executor's tracing channels (src/tracing.ts).
 * A run is one span; each nested call is a span under it, with a child span per phase it spent
 * time in (queued, execute, commit hold, post-execute); a type-check and each upstream request a
 * tool source makes are spans too, and the upstream request carries the W3C trace context on.
 *
 * Spans are parented by ids, not by the active context (so no context manager is needed): a nested call finds its run's span by
 * the run's callId, an upstream request its call's `execute` span by the callId. A run's own
 * parent is the incoming `traceparent` it was given, else (or when it continues that trace) the
 * context active when it started. With a context manager registered, the run, each phase and
 * each upstream request also run with their span active, so the spans tools make nest in them.
 */
import {
  context,
  createTraceState,
  isSpanContextValid,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import {
  nestedCallChannel,
  runChannel,
  toolSourceChannel,
  typecheckChannel,
  type NestedCallMessage,
  type RunMessage,
  type ToolSourceMessage,
  type TraceContext,
  type TypecheckMessage,
  type Within,
} from '../src/tracing.ts';

export interface InstrumentOptions {
  /** Where spans go. Default: the global tracer provider (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
}

/** The tracer's name (the instrumentation scope spans are reported under). */
export const TRACER_NAME = 'ptc-executor';

/** Subscribes to the tracing channels and makes spans; returns `uninstall()`, which unsubscribes. */
export function instrument(options: InstrumentOptions = {}): () => void {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(TRACER_NAME);
  const spans = new Spans(tracer);
  const subscriptions = [
    subscribe(runChannel, (message) => spans.startRun(message), (message) => spans.endRun(message)),
    subscribe(nestedCallChannel, (message) => spans.startPhase(message), (message) => spans.endPhase(message)),
    subscribe(typecheckChannel, (message) => spans.startTypecheck(message), (message) => spans.end(message)),
    subscribe(toolSourceChannel, (message) => spans.startRequest(message), (message) => spans.endRequest(message)),
  ];
  let installed = true;
  return () => {
    if (!installed) return;
    installed = false;
    for (const unsubscribe of subscriptions) unsubscribe();
  };
}

interface Channel<M extends object> {
  subscribe(handlers: Handlers<M>): void;
  unsubscribe(handlers: Handlers<M>): void;
}
type Handlers<M> = Record<'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error', (message: M & { error?: unknown }) => void>;

/** Starts a span on `start`, ends it on `asyncEnd` (or on `end` after a synchronous throw). */
function subscribe<M extends object>(channel: Channel<M>, start: (message: M) => void, end: (message: M & { error?: unknown }) => void): () => void {
  const ignore = (): void => undefined;
  const handlers: Handlers<M> = {
    start,
    // A traced promise ends in asyncEnd; a body that threw before making one ends here.
    end: (message) => {
      if (message.error !== undefined && !('result' in message)) end(message);
    },
    asyncStart: ignore,
    asyncEnd: end,
    error: ignore,
  };
  channel.subscribe(handlers);
  return () => channel.unsubscribe(handlers);
}

class Spans {
  readonly #tracer: Tracer;
  readonly #open = new WeakMap<object, Span>();
  /** Open run spans by the run's callId, call spans and execute spans by the nested call's callId: parents of what starts inside them. */
  readonly #runs = new Map<string, Span>();
  readonly #calls = new Map<string, Span>();
  readonly #executing = new Map<string, Span>();

  constructor(tracer: Tracer) {
    this.#tracer = tracer;
  }

  startRun(message: RunMessage): void {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'run_code',
      'gen_ai.tool.call.id': message.callId,
      'session.id': message.sessionId,
      'ptc.root_call_id': message.rootCallId,
      'ptc.bytes_in': message.bytesIn,
    };
    if (message.trace?.tenant !== undefined) attributes['ptc.tenant'] = message.trace.tenant;
    const span = this.#tracer.startSpan('execute_tool run_code', { kind: SpanKind.INTERNAL, attributes }, runParent(message.trace));
    this.#open.set(message, span);
    message.within = activate(span);
    this.#runs.set(message.callId, span);
  }

  endRun(message: RunMessage & { error?: unknown }): void {
    if (this.#runs.get(message.callId) === this.#open.get(message)) this.#runs.delete(message.callId);
    const span = this.#take(message);
    if (span === undefined) return;
    if (message.calls !== undefined) span.setAttribute('ptc.calls', message.calls);
    if (message.bytesOut !== undefined) span.setAttribute('ptc.bytes_out', message.bytesOut);
    finish(span, message.error === undefined ? undefined : codeOf(message.error));
  }

  startPhase(message: NestedCallMessage): void {
    if (message.phase === 'call') {
      const attributes: Attributes = {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': message.name,
        'gen_ai.tool.call.id': message.callId,
        'session.id': message.sessionId,
        'ptc.root_call_id': message.rootCallId,
      };
      if (message.runCallId !== undefined) attributes['ptc.run_call_id'] = message.runCallId;
      if (message.bytesIn !== undefined) attributes['ptc.bytes_in'] = message.bytesIn;
      const span = this.#tracer.startSpan(`execute_tool ${message.name}`, { kind: SpanKind.INTERNAL, attributes }, under(this.#runs.get(message.runCallId ?? '')));
      this.#open.set(message, span);
      this.#calls.set(message.callId, span);
      return;
    }
    const span = this.#tracer.startSpan(`ptc.${message.phase.replace('-', '_')}`, { kind: SpanKind.INTERNAL, attributes: { 'gen_ai.tool.call.id': message.callId } }, under(this.#calls.get(message.callId)));
    this.#open.set(message, span);
    message.within = activate(span);
    if (message.phase === 'execute') this.#executing.set(message.callId, span);
  }

  endPhase(message: NestedCallMessage & { error?: unknown }): void {
    const span = this.#open.get(message);
    if (message.phase === 'call' && this.#calls.get(message.callId) === span) this.#calls.delete(message.callId);
    if (message.phase === 'execute' && this.#executing.get(message.callId) === span) this.#executing.delete(message.callId);
    this.#take(message);
    if (span === undefined) return;
    if (message.phase !== 'call') return finish(span, message.error === undefined ? undefined : codeOf(message.error));
    span.setAttribute('ptc.is_error', message.isError === true);
    if (message.bytesOut !== undefined) span.setAttribute('ptc.bytes_out', message.bytesOut);
    finish(span, message.isError === true ? (message.errorCode ?? 'TOOL_FAILED') : undefined);
  }

  startTypecheck(message: TypecheckMessage): void {
    const span = this.#tracer.startSpan('ptc.typecheck', { kind: SpanKind.INTERNAL, attributes: { 'ptc.typecheck.mode': message.mode } }, under(this.#runs.get(message.callId)));
    this.#open.set(message, span);
  }

  end(message: object & { error?: unknown }): void {
    const span = this.#take(message);
    if (span !== undefined) finish(span, message.error === undefined ? undefined : codeOf(message.error));
  }

  startRequest(message: ToolSourceMessage): void {
    const attributes: Attributes =
      message.kind === 'mcp'
        ? { 'mcp.method.name': 'tools/call', 'rpc.system': 'mcp', 'rpc.service': message.server, 'rpc.method': 'tools/call', 'gen_ai.tool.name': message.operation }
        : httpAttributes(message.operation, message.server);
    attributes['gen_ai.tool.call.id'] = message.callId;
    attributes['ptc.tool'] = message.tool;
    const name = message.kind === 'mcp' ? `tools/call ${message.operation}` : message.operation;
    const parent = this.#executing.get(message.callId) ?? this.#calls.get(message.callId);
    const span = this.#tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, under(parent));
    this.#open.set(message, span);
    message.within = activate(span);
    inject(span.spanContext(), message.carrier);
  }

  endRequest(message: ToolSourceMessage & { error?: unknown }): void {
    const span = this.#take(message);
    if (span === undefined) return;
    if (message.status !== undefined) span.setAttribute('http.response.status_code', message.status);
    finish(span, message.error === undefined ? undefined : codeOf(message.error));
  }

  #take(message: object): Span | undefined {
    const span = this.#open.get(message);
    this.#open.delete(message);
    return span;
  }
}

/**
 * A run's parent: the incoming `traceparent`, unless the active context already continues that
 * trace (an HTTP server span made by Fastify's or Node's instrumentation), which then comes first.
 */
function runParent(given: TraceContext | undefined): Context {
  const active = context.active();
  const remote = given === undefined ? undefined : remoteParent(given);
  if (remote === undefined) return active;
  return trace.getSpanContext(active)?.traceId === trace.getSpanContext(remote)?.traceId ? active : remote;
}

/** Runs work with `span` active, so spans the work makes itself (a tool's own, an HTTP client's) nest under it. */
function activate(span: Span): Within {
  const active = trace.setSpan(context.active(), span);
  return (work) => context.with(active, work);
}

/** The context to start a child of `span` in: the active one without it. */
function under(span: Span | undefined): Context {
  return span === undefined ? context.active() : trace.setSpan(context.active(), span);
}

/** An OpenAPI request's HTTP client attributes: `GET /pets/{id}` on `https://api.example.com`. */
function httpAttributes(operation: string, origin: string): Attributes {
  const url = new URL(origin);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  const space = operation.indexOf(' ');
  return { 'http.request.method': operation.slice(0, space), 'url.template': operation.slice(space + 1), 'server.address': url.hostname, 'server.port': port, 'url.scheme': url.protocol.slice(0, -1) };
}

/** Ends a span, marked failed with `errorType` (a stable code, never a message: those may quote a program). */
function finish(span: Span, errorType: string | undefined): void {
  if (errorType !== undefined) {
    span.setAttribute('error.type', errorType);
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
  }
  span.end();
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : 'Error';
}

/** `version-traceid-parentid-flags`; a later version may add fields after these. */
const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})(-.*)?$/;

/** The context of a remote parent named by a W3C `traceparent`, or undefined when it names none. */
function remoteParent(given: TraceContext): Context | undefined {
  const match = given.traceparent === undefined ? null : TRACEPARENT.exec(given.traceparent.trim());
  if (match === null || match[1] === 'ff' || (match[1] === '00' && match[5] !== undefined)) return undefined;
  const spanContext: SpanContext = { traceId: match[2], spanId: match[3], traceFlags: Number.parseInt(match[4], 16) & 1, isRemote: true };
  if (given.tracestate !== undefined && given.tracestate !== '') spanContext.traceState = createTraceState(given.tracestate);
  if (!isSpanContextValid(spanContext)) return undefined;
  return trace.setSpanContext(context.active(), spanContext);
}

/** Writes `traceparent` (and `tracestate`) for `spanContext` into `carrier`. */
function inject(spanContext: SpanContext, carrier: Record<string, string>): void {
  if (!isSpanContextValid(spanContext)) return;
  carrier.traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-0${(spanContext.traceFlags & 1).toString(16)}`;
  const state = spanContext.traceState?.serialize();
  if (state !== undefined && state !== '') carrier.tracestate = state;
}
