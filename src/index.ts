/**
 * ptc-executor — the complete public surface of the package. Named exports
 * only; anything not re-exported here is internal.
 */
export type { JsonValue, JsonObject, JsonPrimitive, FrozenJson, JsonViolation } from './json.ts';
export { snapshotJson, isLosslessJson, deepFreeze, LossyJsonError } from './json.ts';
export type { ContentBlock, TextContent, ImageContent, AudioContent, EmbeddedResource, ResourceLink } from './content.ts';
export { textContent } from './content.ts';
export type {
  ValueSchemaSpec,
  ParameterSchemaSpec,
  PropertySpec,
  JsonSchemaNode,
  InferArgs,
  InferValue,
} from './schema/types.ts';
export { ERROR_CODES, PtcError, ToolOutputError } from './errors.ts';
export type { ErrorCode } from './errors.ts';
export type {
  ToolDefinition,
  ToolExec,
  WrapperExec,
  ToolExecutionResult,
  ToolSuccess,
  ToolFailure,
  ToolSchema,
  ToolRegistry,
  DispatchRequest,
  DispatchToken,
  AgentHandle,
  AgentContext,
  PostExecuteDecision,
  ExecuteHook,
  PostExecuteHook,
  AdmitHook,
} from './tool.ts';
export { defineTool } from './define-tool.ts';
export type { ToolSpec } from './define-tool.ts';
export { createToolRegistry } from './registry.ts';
export type { ToolRegistryOptions, SpillOptions } from './registry.ts';
export type { ToolEvent, NewToolEvent, ToolResultEvent, PtcDispatchEvent, PtcDispatchStartEvent, EventSink } from './events.ts';
export { createMemoryEventSink } from './event-sinks/memory-sink.ts';
export type { MemoryEventSink } from './event-sinks/memory-sink.ts';
export { createJsonlEventSink } from './event-sinks/jsonl-sink.ts';
export type { JsonlEventSink, JsonlEventSinkOptions } from './event-sinks/jsonl-sink.ts';
export type {
  SandboxRuntime,
  SandboxRunRequest,
  SandboxRunOutcome,
  SandboxFailure,
  SandboxFailureKind,
  SandboxLimits,
  SandboxCallOutcome,
  SandboxPoolStatus,
} from './sandbox-runtime.ts';
