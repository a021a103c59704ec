/**
 * `ptc-executor/otel`: OpenTelemetry spans for runs, nested calls, type-checks and tool-source
 * requests, made from the package's tracing channels. Loads `@opentelemetry/api` (an optional peer).
 */
export { instrument, TRACER_NAME } from '../services/otel-instrument.ts';
export type { InstrumentOptions } from '../services/otel-instrument.ts';
export { NESTED_CALL_CHANNEL, RUN_CHANNEL, TOOL_SOURCE_CHANNEL, TYPECHECK_CHANNEL } from '../src/tracing.ts';
export type { NestedCallMessage, NestedCallPhase, RunMessage, ToolSourceMessage, TraceContext, TypecheckMessage } from '../src/tracing.ts';
