/**
 * The trace context a request brings (W3C `traceparent`/`tracestate`, as HTTP headers or as MCP
 * `_meta` entries) and its tenant, in the shape a dispatch carries to the tracing channels.
 */
import type { TraceContext } from '../src/tracing.ts';

/** Longest header value kept: more than a traceparent or the tracestate W3C asks to propagate; a longer one is dropped whole. */
const MAX_TRACE_HEADER = 1024;

/** Undefined when the request names no trace parent and no tenant. */
export function incomingTrace(traceparent: unknown, tracestate: unknown, tenant: string | undefined): TraceContext | undefined {
  const parent = headerText(traceparent);
  if (parent === undefined && tenant === undefined) return undefined;
  const context: { -readonly [K in keyof TraceContext]: TraceContext[K] } = {};
  if (parent !== undefined) {
    context.traceparent = parent;
    const state = headerText(tracestate);
    if (state !== undefined) context.tracestate = state;
  }
  if (tenant !== undefined) context.tenant = tenant;
  return context;
}

/** A header's one value (repeated tracestate headers join with commas, as W3C says). */
function headerText(value: unknown): string | undefined {
  const text = Array.isArray(value) ? value.filter((v) => typeof v === 'string').join(',') : value;
  return typeof text === 'string' && text !== '' && text.length <= MAX_TRACE_HEADER ? text : undefined;
}
