/**
 * ptc-executor — the complete public surface of the package. Named exports
 * only; anything not re-exported here is internal.
 */
import { createCodeModeCore, type CodeMode, type CodeModeKind } from './code-mode/code-mode.ts';
import type { CodeModeLimits } from './code-mode/limits.ts';
import type { TypecheckMode } from './code-mode/run-code-tool.ts';
import type { TypingsService } from './code-mode/typings-service.ts';
import type { SandboxRuntime } from './sandbox-runtime.ts';
import type { ToolRegistry } from './tool.ts';
import { createInProcessRuntime } from '../sandbox/in-process-runtime.ts';
import { createProcessRuntime } from '../sandbox/process/process-runtime.ts';
import { createTypingsService } from '../typings/service.ts';
export type { JsonValue, JsonObject, JsonPrimitive, FrozenJson, JsonViolation } from './json.ts';
export { snapshotJson, snapshotFrozenJson, isLosslessJson, deepFreeze, LossyJsonError } from './json.ts';
export { SchemaError } from './schema/schema-error.ts';
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
  AnyToolDefinition,
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
export type {
  ToolEvent,
  NewToolEvent,
  ToolResultEvent,
  PtcDispatchEvent,
  PtcDispatchStartEvent,
  EventSink,
  LogGapEvent,
  SessionLogEvent,
  EventPage,
  ReadPageOptions,
  LogDamage,
} from './events.ts';
export { createEventCapper, DEFAULT_EVENT_CAPS } from './event-sinks/event-caps.ts';
export type { EventCaps } from './event-sinks/event-caps.ts';
export { createMemoryEventSink } from './event-sinks/memory-sink.ts';
export type { MemoryEventSink } from './event-sinks/memory-sink.ts';
export { createJsonlEventSink } from './event-sinks/jsonl-sink.ts';
export type { JsonlEventSink, JsonlEventSinkOptions, SinkHealth } from './event-sinks/jsonl-sink.ts';
export { EventLogError } from './event-sinks/jsonl-sink.ts';
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

// ---------------------------------------------------------------------------
// First-party tools and the MCP bridge (DESIGN §8).
// ---------------------------------------------------------------------------
export { createBuiltinTools, DEFAULT_LIMITS as DEFAULT_BUILTIN_TOOL_LIMITS, WorkspaceError } from './tools/index.ts';
export type { BuiltinToolsOptions, BuiltinToolLimits, WorkspaceErrorReason, DiffHunk } from './tools/index.ts';
export { connectMcpServers, validateMcpServersConfig } from './mcp/index.ts';
export type {
  McpBridge,
  McpBridgeOptions,
  McpServerConfig,
  McpServersConfig,
  McpStdioServerConfig,
  McpHttpServerConfig,
  McpServerStatus,
  McpToolValue,
} from './mcp/index.ts';

// ---------------------------------------------------------------------------
// Code Mode (DESIGN §7). createCodeMode fills in the defaults: this facade is
// the one file of src/ that composes the sandbox and typings wings.
// ---------------------------------------------------------------------------
export { createCodeModeCore } from './code-mode/code-mode.ts';
export type { CodeMode, CodeModeCoreOptions, CodeModeKind } from './code-mode/code-mode.ts';
export { DEFAULT_CODE_MODE_LIMITS } from './code-mode/limits.ts';
export type { CodeModeLimits } from './code-mode/limits.ts';
export type { TypecheckMode } from './code-mode/run-code-tool.ts';
export type { TypingsService, TypecheckDiagnostic } from './code-mode/typings-service.ts';
export { createInProcessRuntime } from '../sandbox/in-process-runtime.ts';
export type { InProcessRuntimeOptions } from '../sandbox/in-process-runtime.ts';
export { createProcessRuntime } from '../sandbox/process/process-runtime.ts';
export type { ProcessRuntime, ProcessRuntimeOptions, SandboxProcessInfo } from '../sandbox/process/process-runtime.ts';

export interface CodeModeOptions {
  registry: ToolRegistry;
  /**
   * Where programs run. Default `'in-process'` (isolates in this process, with
   * a warm pool of 2). `'process'`: isolates in a supervised pool of child
   * processes with default options (see `createProcessRuntime` to tune them),
   * so a V8 abort costs one run, never this process. A runtime made here is
   * closed by `close()`; a `SandboxRuntime` you pass stays yours to close.
   */
  runtime?: 'in-process' | 'process' | SandboxRuntime;
  /** Per-run limits; see {@link CodeModeLimits} for each default. */
  limits?: Partial<CodeModeLimits>;
  /** `'code'` (default), `'native'` or `'both'`; see {@link createCodeModeCore}. */
  mode?: CodeModeKind;
  /** `'off'` (default), `'warn'` or `'enforce'`: type-check programs against the tool typings first. */
  typecheck?: TypecheckMode;
  /** Default: a typings service stating these limits in its prompt. */
  typings?: TypingsService;
  /** Every console line of every run as it is logged. */
  onLog?(line: string, call: { callId: string; sessionId: string }): void;
}

/** Code Mode with defaults: register `runCodeTool` on the registry to offer `run_code`. */
export function createCodeMode(options: CodeModeOptions): CodeMode {
  const choice = options.runtime ?? 'in-process';
  let runtime: SandboxRuntime;
  let owned = false;
  if (choice === 'in-process') {
    runtime = createInProcessRuntime({ warmPoolMemoryMiB: options.limits?.memoryMiB ?? 128 });
    owned = true;
  } else if (choice === 'process') {
    runtime = createProcessRuntime({ warmPoolMemoryMiB: options.limits?.memoryMiB ?? 128 });
    owned = true;
  } else {
    runtime = choice;
  }
  // A typings service made here is closed by close() (its checker threads); one you pass stays yours.
  const ownTypings = options.typings === undefined ? createTypingsService({ promptLimits: { ...options.limits } }) : undefined;
  const core = createCodeModeCore({
    registry: options.registry,
    runtime,
    typings: options.typings ?? ownTypings,
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...(options.mode === undefined ? {} : { mode: options.mode }),
    ...(options.typecheck === undefined ? {} : { typecheck: options.typecheck }),
    ...(options.onLog === undefined ? {} : { onLog: options.onLog }),
  });
  return {
    runCodeTool: core.runCodeTool,
    typings: () => core.typings(),
    prompt: () => core.prompt(),
    async close() {
      await core.close();
      await ownTypings?.close?.();
      if (owned) await runtime.close();
    },
  };
}

// ---------------------------------------------------------------------------
// The service (DESIGN §9): the Fastify plugin a Node host registers on its
// own instance, its parts, and the ready-made server `ptc serve` runs.
// ---------------------------------------------------------------------------
export { ptcPlugin } from '../services/plugin.ts';
export type { PtcPluginOptions, PromptSource } from '../services/plugin.ts';
export { createSessionStore } from '../services/session-store.ts';
export type { SessionStore, SessionEventReader, SessionStoreOptions } from '../services/session-store.ts';
export { createLogRouter } from '../services/log-router.ts';
export type { LogRouter } from '../services/log-router.ts';
export { createMetrics } from '../services/metrics.ts';
export type { PtcMetrics, MetricsOptions } from '../services/metrics.ts';
export { createRunTracker } from '../services/run-tracker.ts';
export type { RunTracker, RunTrackerOptions } from '../services/run-tracker.ts';
export { loadConfig, ConfigError } from '../services/config.ts';
export type { PtcConfig, ConfigFlags, LoadConfigOptions } from '../services/config.ts';
export type { PtcServer, ServerOptions } from '../services/server.ts';

/**
 * The whole service on a fresh Fastify instance (what `ptc serve` runs).
 * Loaded on first use, so importing the library does not load Fastify.
 */
export async function createServer(
  config: import('../services/config.ts').PtcConfig,
  options?: import('../services/server.ts').ServerOptions,
): Promise<import('../services/server.ts').PtcServer> {
  const { createServer: create } = await import('../services/server.ts');
  return create(config, options);
}
