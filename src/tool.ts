/**
 * The tool contract (docs/architecture.md, "Tools and the dispatch pipeline"), types only: definitions, the immutable exec
 * identity, results, hooks and the registry surface. Implementations import it.
 */
import type { ContentBlock } from './content.ts';
import type { ErrorCode, ErrorDetails } from './errors.ts';
import type { EventSink, NewToolEvent } from './events.ts';
import type { FrozenJson, JsonObject, JsonValue } from './json.ts';
import type { JsonSchemaNode } from './schema/types.ts';
import type { TraceContext } from './tracing.ts';

/** An opaque identity, unique per dispatch. Compare by reference. */
export interface DispatchToken {
  readonly __dispatchToken: unique symbol;
}

/** Durable context a tool appends for the next model request. */
export interface AgentContext {
  content: string | ContentBlock[];
  source: { kind: 'plugin'; plugin: string };
}

/**
 * The harness's agent as a tool sees it (`exec.agent`): bound by the registry
 * to the call it was given to. `inject` appends durable context the next
 * model request sees; it does not wake an idle agent. An inject after the
 * call settled is dropped without an error (the run it belongs to is over);
 * a malformed context throws a `TypeError`. A host's {@link Agent} may also
 * throw (a disposed agent): guard the call with try/catch.
 */
export interface AgentHandle {
  inject(context: AgentContext): void;
}

/** Which call injected a context: filled in by the registry, never by the tool. */
export interface InjectOrigin {
  sessionId: string;
  /** The outer call the injecting call belongs to (itself when not nested). */
  rootCallId: string;
  /** The call whose body injected. */
  callId: string;
  /** The tool that injected. */
  name: string;
}

/**
 * The harness's agent as the registry receives it (`DispatchRequest.agent`).
 * The registry hands each call's body its own {@link AgentHandle}, which
 * checks the context, turns string content into one text block and passes
 * the call's {@link InjectOrigin}.
 */
export interface Agent {
  inject(context: InjectedContext, origin: InjectOrigin): void;
}

/** A context as the registry passes it on: checked, frozen, content as blocks. */
export interface InjectedContext {
  content: ContentBlock[];
  source: { kind: 'plugin'; plugin: string };
}

/** What a tool body sees: immutable for the whole dispatch. */
export interface ToolExec<Args = FrozenJson<JsonObject>> {
  readonly callId: string;
  readonly rootCallId: string;
  readonly sessionId: string;
  /**
   * Set when the caller named the session. Without a `sessionId` a call is in session `default`,
   * which every such caller shares, so nothing may be kept for it between calls (run_code's isolates).
   */
  readonly sessionNamed?: true;
  readonly name: string;
  /** Lossless snapshot of the caller's arguments, deep-frozen. */
  readonly arguments: Args;
  readonly agent?: AgentHandle;
  readonly token: DispatchToken;
  /** Aborts when the caller's or an around-dispatch wrapper's signal aborts. Pass it to long I/O. */
  readonly signal: AbortSignal;
  /** The enclosing call's token: set exactly when this call is nested (from run_code). */
  readonly parent?: DispatchToken;
  /** The request's `trace`, when it gave one: for tracers only (src/tracing.ts). */
  readonly trace?: TraceContext;
}

/** The exec an around-dispatch wrapper sees: `signal` may be replaced (never removed). */
export type WrapperExec = Omit<ToolExec, 'signal'> & { signal: AbortSignal };

/**
 * Extra context a post-execute hook attaches to a result
 * (`additionalContexts`): presentation for the next model request, never
 * part of the canonical value and never shown to a program.
 */
export interface HookContext {
  content: string | ContentBlock[];
  /** Who attached it, such as the policy's name. */
  source?: string;
}

/** A failure's structure: its class name and stable code, plus the {@link ErrorDetails} that apply. */
export interface ToolErrorInfo extends ErrorDetails {
  /** The error class name, such as `ToolOutputError`. */
  name: string;
  code: ErrorCode | (string & {});
}

export interface ToolSuccess {
  isError: false;
  value: JsonValue;
  content: ContentBlock[];
  meta?: JsonValue;
  additionalContexts?: HookContext[];
}
export interface ToolFailure {
  isError: true;
  error: { message: string; info?: ToolErrorInfo };
  content: ContentBlock[];
  meta?: JsonValue;
  additionalContexts?: HookContext[];
  /** A failure never carries a value. */
  value?: never;
}
export type ToolExecutionResult = ToolSuccess | ToolFailure;

/** The output declaration: a schema, a pure renderer and an optional card projector. */
export interface ToolOutput<Args, Value> {
  schema: JsonSchemaNode;
  render(args: Args, value: Value): ContentBlock[];
  /** Replayable card data; computed only for outer (non-nested) calls. */
  presentationMeta?(args: Args, value: Value): JsonValue;
  /**
   * The value's shape as its source declares it, when `schema` cannot
   * enforce it (it is outside the subset): the typings are made from it and
   * say the value is not validated. Any JSON Schema; only `schema` is checked.
   */
  unvalidatedSchema?: JsonSchemaNode;
}

/**
 * A tool as the registry stores it. `defineTool` builds one from DSL schemas;
 * raw and dynamic (MCP) definitions are written as plain objects.
 */
export interface ToolDefinition<Args = FrozenJson<JsonObject>, Value = JsonValue> {
  name: string;
  description: string;
  /** The raw parameter schema (an object node). */
  parameters: JsonSchemaNode;
  /**
   * True for `defineTool` definitions: arguments are validated against
   * `parameters` before `execute`. Raw definitions own their input checks.
   * Default false.
   */
  validateArguments?: boolean;
  output: ToolOutput<Args, Value>;
  execute(args: Args, exec: ToolExec<Args>): Promise<Value>;
  /** May this call overlap others inside one program? Default: false (exclusive). */
  isConcurrencySafe?(args: Args): boolean;
  /** Around-dispatch deadline in ms; `TOOL_TIMEOUT` when it passes. Never shown by `schemas()`. */
  timeoutMs?: number;
  /**
   * Does a call from a program wait for a person first? `true`, or a function of the call that
   * says so. A call that needs approval pauses its run (docs/architecture.md, "Durable runs");
   * the run resumes by replay once someone decides. Only `schemas()`' `mayPause` flag shows it.
   */
  needsApproval?: boolean | ApprovalPredicate<Args>;
  /**
   * How a resumed run answers this tool's earlier calls: from the run's journal (default: the
   * value is stored when the run pauses), or `'reexecute'`: run again (idempotent reads with large
   * values, which are then not stored).
   */
  replay?: 'reexecute';
  /** Undoes one applied call (`codeMode.rollback`): given the call's arguments and the value it returned. */
  revert?(args: Args, value: Value, call: RevertCall): Promise<void> | void;
}

/**
 * A `needsApproval` function. Declared through a method so that, like `execute`, its parameter
 * is bivariant: every `ToolDefinition<A, V>` stays an {@link AnyToolDefinition}.
 */
export type ApprovalPredicate<Args> = {
  needsApproval(args: Args, call: ApprovalCall): boolean | Promise<boolean>;
}['needsApproval'];

/** The call a `needsApproval` function is asked about. */
export interface ApprovalCall {
  /** The nested call's id (`<runCallId>:ptc:<n>`). */
  readonly callId: string;
  /** The run it belongs to (run_code's callId). */
  readonly runCallId: string;
  readonly rootCallId: string;
  readonly sessionId: string;
  readonly name: string;
}

/** The call a `revert` undoes. */
export interface RevertCall {
  /** The nested call's id (`<runCallId>:ptc:<n>`). */
  readonly callId: string;
  readonly runCallId: string;
  readonly sessionId: string;
  readonly name: string;
  /** Aborts when the rollback is cancelled. */
  readonly signal: AbortSignal;
}

/**
 * Any definition, whatever its argument and value types: what the registry
 * accepts. (Method parameters are bivariant, so every `ToolDefinition<A, V>`
 * fits.)
 */
export type AnyToolDefinition = ToolDefinition<never, unknown>;

/** The model-visible projection of a tool. Nothing else leaves the registry. */
export interface ToolSchema {
  name: string;
  description: string;
  parameters: JsonSchemaNode;
  /** The enforced output schema. */
  output: JsonSchemaNode;
  /** The declared shape of a value `output` cannot enforce (`output.unvalidatedSchema`): typed, not validated. */
  unvalidatedOutput?: JsonSchemaNode;
  /** Set when a call may pause its run for approval (`needsApproval`): the typings say so. */
  mayPause?: true;
}

/** Around-dispatch wrapper (`tools/execute`). */
export type ExecuteHook = (
  exec: WrapperExec,
  next: () => Promise<ToolExecutionResult>,
) => Promise<ToolExecutionResult>;

/**
 * Post-execute decisions. The outcomes are mutually exclusive: replace
 * `content`, replace `value`, attach contexts only, or `block`. Any of them
 * may attach `additionalContexts`, which are appended to those of earlier
 * hooks; replacing the value or blocking drops the contexts earlier hooks
 * attached (they may describe the value that is gone). Replacing both
 * content and value, a block with content or value, and an accept that
 * changes nothing are unrepresentable.
 */
export type PostExecuteDecision =
  | { kind: 'accept'; content: ContentBlock[]; value?: never; feedback?: never; additionalContexts?: HookContext[] }
  | { kind: 'accept'; value: JsonValue; content?: never; feedback?: never; additionalContexts?: HookContext[] }
  | { kind: 'accept'; additionalContexts: HookContext[]; content?: never; value?: never; feedback?: never }
  | { kind: 'block'; feedback: string; content?: never; value?: never; additionalContexts?: HookContext[] };

export type PostExecuteHook = (
  exec: ToolExec,
  result: ToolExecutionResult,
) => PostExecuteDecision | undefined | Promise<PostExecuteDecision | undefined>;

/**
 * Admission (`tools/admit`): runs first, before anything else. Return a
 * message to refuse the call as `UNKNOWN_TOOL` (code mode uses it to keep
 * tools callable only from programs).
 */
export type AdmitHook = (call: { name: string; nested: boolean }) => string | undefined;

export interface HookMap {
  'tools/execute': ExecuteHook;
  'tools/post-execute': PostExecuteHook;
  'tools/admit': AdmitHook;
}

export interface DispatchRequest {
  name: string;
  arguments: unknown;
  /** Default: a fresh random id. */
  callId?: string;
  /** Default: `callId`. */
  rootCallId?: string;
  /** Default: `"default"`. */
  sessionId?: string;
  /** Default: a signal that never aborts. */
  signal?: AbortSignal;
  /**
   * The harness's agent: each call's body sees it as `exec.agent`, bound to
   * that call (nested calls of a program included). Without it `exec.agent`
   * is unset.
   */
  agent?: Agent;
  /** The enclosing dispatch's token; marks the call as nested. */
  parent?: DispatchToken;
  /**
   * Who asked, for tracers: the incoming W3C `traceparent`/`tracestate` and the tenant. It rides on
   * the `ptc:run` channel's message (a tracer parents the run's span to it); nothing else reads it.
   */
  trace?: TraceContext;
}

/** What the registry knows of a registered tool beyond its schema. */
export interface RegisteredTool {
  readonly name: string;
  isConcurrencySafe(args: JsonValue): boolean;
  /** The definition's `needsApproval`, as a function (`true` becomes one that says yes); absent when never. */
  readonly needsApproval?: (args: JsonValue, call: ApprovalCall) => boolean | Promise<boolean>;
  /** The definition's `replay`. */
  readonly replay?: 'reexecute';
  /** The definition's `revert`. */
  readonly revert?: (args: JsonValue, value: JsonValue, call: RevertCall) => Promise<void> | void;
}

export interface ToolRegistry {
  /** Registers a definition; returns its dispose. Throws on a missing output, bad raw schema or duplicate name. */
  register(definition: AnyToolDefinition): () => void;
  /** Model-visible projections, sorted by name. */
  schemas(): ToolSchema[];
  /** Lookup used by schedulers; undefined when no such tool. */
  get(name: string): RegisteredTool | undefined;
  hook<K extends keyof HookMap>(kind: K, hook: HookMap[K]): () => void;
  /** Runs the pipeline. Never rejects: every failure is a result. */
  dispatch(request: DispatchRequest): Promise<ToolExecutionResult>;
  /** Called after every register/dispose (typings caches listen). Returns unsubscribe. */
  onChange(listener: () => void): () => void;
  /** The sink given at creation, if any: run_code appends its nested `tool/ptc-dispatch*` events here. */
  readonly eventSink?: EventSink;
  /** Reports an event `eventSink` failed to take, through the registry's `onSinkError` (run_code's nested events use it). */
  reportSinkError?(error: unknown, event: NewToolEvent): void;
}
