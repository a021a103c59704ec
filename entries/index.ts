/**
 * `ptc-executor`: the tool contract and Code Mode. Named exports only;
 * anything not re-exported by an entry is internal.
 *
 * Importing it is light: it loads neither isolated-vm (the sandbox loads on
 * the first run), nor Fastify, prom-client or the MCP SDK. The service is
 * `ptc-executor/service`, the MCP bridge `ptc-executor/mcp`, the AI SDK
 * adapter `ptc-executor/ai-sdk`.
 */
export type { JsonValue, JsonObject, JsonPrimitive, FrozenJson, JsonViolation } from '../src/json.ts';
export { snapshotJson, snapshotFrozenJson, isLosslessJson, deepFreeze, LossyJsonError } from '../src/json.ts';
export { SchemaError } from '../src/schema/schema-error.ts';
export type { ContentBlock, TextContent, ImageContent, AudioContent, EmbeddedResource, ResourceLink } from '../src/content.ts';
export { textContent } from '../src/content.ts';
export type {
  ValueSchemaSpec,
  ParameterSchemaSpec,
  PropertySpec,
  JsonSchemaNode,
  InferArgs,
  InferValue,
} from '../src/schema/types.ts';
export { ERROR_CODES, PtcError, ToolOutputError } from '../src/errors.ts';
export type { ErrorCode, ErrorDetails } from '../src/errors.ts';
export type {
  ToolDefinition,
  AnyToolDefinition,
  ToolExec,
  WrapperExec,
  ToolExecutionResult,
  ToolSuccess,
  ToolFailure,
  ToolErrorInfo,
  ToolSchema,
  ToolRegistry,
  DispatchRequest,
  DispatchToken,
  Agent,
  AgentHandle,
  AgentContext,
  InjectOrigin,
  InjectedContext,
  HookContext,
  PostExecuteDecision,
  ExecuteHook,
  PostExecuteHook,
  AdmitHook,
  ApprovalCall,
  ApprovalPredicate,
  RevertCall,
} from '../src/tool.ts';
export { defineTool } from '../src/define-tool.ts';
export type { ToolSpec } from '../src/define-tool.ts';
// Tracing: the channels a tracer subscribes to, and what their messages carry (ptc-executor/otel makes spans of them).
export { NESTED_CALL_CHANNEL, RUN_CHANNEL, TOOL_SOURCE_CHANNEL, TYPECHECK_CHANNEL } from '../src/tracing.ts';
export type { NestedCallMessage, NestedCallPhase, RunMessage, ToolSourceMessage, TraceContext, TypecheckMessage } from '../src/tracing.ts';
export { createToolRegistry } from '../src/registry.ts';
export type { ToolRegistryOptions, SpillOptions } from '../src/registry.ts';
export type {
  ToolEvent,
  NewToolEvent,
  ToolResultEvent,
  PtcDispatchEvent,
  PtcDispatchStartEvent,
  AgentContextEvent,
  RunPausedEvent,
  RunResumedEvent,
  RunRevertedEvent,
  EventSink,
  LogGapEvent,
  SessionLogEvent,
  EventPage,
  ReadPageOptions,
  LogDamage,
} from '../src/events.ts';
export { createEventAgent } from '../src/event-agent.ts';
export { contextsOfEvents } from '../src/run-contexts.ts';
export type { RunContext } from '../src/run-contexts.ts';
export { createEventCapper, DEFAULT_EVENT_CAPS } from '../src/event-sinks/event-caps.ts';
export type { EventCaps } from '../src/event-sinks/event-caps.ts';
export { createMemoryEventSink } from '../src/event-sinks/memory-sink.ts';
export type { MemoryEventSink } from '../src/event-sinks/memory-sink.ts';
export { createJsonlEventSink, EventLogError } from '../src/event-sinks/jsonl-sink.ts';
export type { JsonlEventSink, JsonlEventSinkOptions, SinkHealth } from '../src/event-sinks/jsonl-sink.ts';
export type {
  SandboxRuntime,
  SandboxRunRequest,
  SandboxRunOutcome,
  SandboxFailure,
  SandboxFailureKind,
  SandboxLimits,
  SandboxCallOutcome,
  SandboxPoolStatus,
} from '../src/sandbox-runtime.ts';

// First-party tools over a workspace directory.
export { createBuiltinTools, DEFAULT_LIMITS as DEFAULT_BUILTIN_TOOL_LIMITS, WorkspaceError } from '../src/tools/index.ts';
export type { BuiltinToolsOptions, BuiltinToolLimits, WorkspaceErrorReason, DiffHunk } from '../src/tools/index.ts';

// Code Mode, composed with its defaults by the composition root.
export { createCodeMode } from '../compose/code-mode.ts';
export { UnsupportedRuntimeError } from '../compose/runtime-support.ts';
export type { CodeModeOptions, ComposedCodeMode, ProcessPoolOptions } from '../compose/code-mode.ts';
export type { CodeMode, CodeModeKind, CodeModeTool, CodeModeToolCall, CodeModeToolResult, DecideCall } from '../src/code-mode/code-mode.ts';

// Durable runs: approvals, journals and their stores.
export { DEFAULT_APPROVAL_TTL_MS, DEFAULT_JOURNAL_RETENTION_MS } from '../src/code-mode/code-mode.ts';
export type { ApprovalRule } from '../src/code-mode/approval-rules.ts';
export type { DurableRunStatus, PausedRun, PausedValue, RollbackReport } from '../src/code-mode/durable-runs.ts';
export { JournalCorruptError } from '../src/code-mode/journal-store.ts';
export type { ApprovalDecision, JournalEntry, JournalEntryState, JournalStore, PendingCall, RunJournal, RunJournalStatus } from '../src/code-mode/journal-store.ts';
export { createMemoryJournalStore } from '../src/code-mode/memory-journal-store.ts';
export { createFileJournalStore } from '../src/code-mode/file-journal-store.ts';
export type { FileJournalStoreOptions } from '../src/code-mode/file-journal-store.ts';
export { createInPlaceApprovers } from '../src/code-mode/in-place-approval.ts';
export type { InPlaceApprovalRequest, InPlaceApprover, InPlaceApprovers } from '../src/code-mode/in-place-approval.ts';
export { DEFAULT_CODE_MODE_LIMITS } from '../src/code-mode/limits.ts';
export { DEFAULT_POOL, DEFAULT_PROCESS_POOL } from '../src/code-mode/pool-defaults.ts';
export type { CodeModeLimits } from '../src/code-mode/limits.ts';
export type { TypecheckMode } from '../src/code-mode/run-code-tool.ts';
export type { TypingsService, TypecheckDiagnostic } from '../src/code-mode/typings-service.ts';
