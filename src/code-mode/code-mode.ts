/**
 * `createCodeModeCore`: Code Mode from injected parts (a registry, a sandbox
 * runtime, optionally a typings service). The `ptc-executor` entry's
 * `createCodeMode` fills in the defaults.
 *
 * Safe by construction: creating Code Mode registers `run_code` on the
 * registry, in the same step that (in `'code'` mode) restricts the other
 * tools to programs, so a direct call is never told to use a run_code that
 * does not exist. `close()` removes both.
 *
 * Modes:
 * - `'code'` (default): tools other than run_code are callable only from a
 *   program; a direct call fails `UNKNOWN_TOOL` telling the model to use run_code.
 * - `'native'`: nothing is restricted and `prompt()` resolves to `''`, so
 *   run_code is not advertised to the model. run_code is still registered for
 *   whoever calls it directly (the service's `POST /v1/run`).
 * - `'both'`: tools are callable directly and from programs; the prompt
 *   advertises run_code.
 */
import type { ContentBlock } from '../content.ts';
import type { JsonValue } from '../json.ts';
import type { JsonSchemaNode } from '../schema/types.ts';
import { createEventAgent } from '../event-agent.ts';
import { hookContexts, injectedContext, type RunContext } from '../run-contexts.ts';
import type { Agent, DispatchToken, HookContext, ToolDefinition, ToolErrorInfo, ToolRegistry, ToolSchema } from '../tool.ts';
import type { SandboxRuntime } from '../sandbox-runtime.ts';
import { CODE_MODE_KINDS, TYPECHECK_MODES, describeChoices, type CodeModeKind } from './choices.ts';
import { resolveLimits, type CodeModeLimits } from './limits.ts';
import { createRunCodeTool, RUN_CODE, type TypecheckMode } from './run-code-tool.ts';
import type { ApprovalRule } from './approval-rules.ts';
import { DurableRuns, type DurableRunStatus, type PausedRun, type PausedValue, type RollbackReport } from './durable-runs.ts';
import type { ApprovalDecision, JournalStore, PendingCall } from './journal-store.ts';
import { createMemoryJournalStore } from './memory-journal-store.ts';
import type { InPlaceApprover } from './in-place-approval.ts';
import type { TypingsService } from './typings-service.ts';

export type { CodeModeKind } from './choices.ts';

export interface CodeModeCoreOptions {
  registry: ToolRegistry;
  runtime: SandboxRuntime;
  /** Typings and prompt generator; required for `typings()`, `prompt()` and type-checking. */
  typings?: TypingsService;
  /** Per-run limits; see {@link CodeModeLimits} for each default. */
  limits?: Partial<CodeModeLimits>;
  /** Default `'code'`. */
  mode?: CodeModeKind;
  /**
   * Type-check programs against the tool typings before running them.
   * `'warn'` puts diagnostics at the top of the logs; `'enforce'` fails the
   * run (kind `typecheck`) before any tool runs. Default `'off'`; needs `typings`.
   * The check spends the run's `timeoutMs` (`'warn'`: at most half of it). One
   * that does not complete fails an `'enforce'` run; under `'warn'` the program
   * runs with a log line saying it was not checked.
   */
  typecheck?: TypecheckMode;
  /** Every console line of every run as it is logged (progress streaming). Never throws into the run. */
  onLog?(line: string, call: { callId: string; sessionId: string }): void;
  /**
   * Tools whose calls need approval beyond those whose definitions say so (`needsApproval`):
   * MCP and other imported tools, by glob. Default none.
   */
  approvals?: readonly ApprovalRule[];
  /** Where paused runs wait for a decision. Default: in memory (lost with the process). */
  journal?: JournalStore;
  /** How long a paused run waits for a decision, ms; a later decision denies the call with reason `expired`. Default `DEFAULT_APPROVAL_TTL_MS`. */
  approvalTtlMs?: number;
  /**
   * How long a paused run's record is kept once it is over, ms: after it expired, or after its
   * resumed run finished or was rolled back. Until then it can be rolled back (and an expired one
   * decided, as denied); then the store removes it. Default `DEFAULT_JOURNAL_RETENTION_MS`.
   */
  journalRetentionMs?: number;
  /** The clock paused runs are timed by (epoch ms). Default `Date.now`. */
  now?(): number;
  /**
   * Asks a person about a gated call while its run waits, before pausing it (an MCP client with
   * elicitation): a decision applies in place, with no pause and no replay; undefined pauses the
   * run as usual. Default none: gated calls pause.
   */
  approveInPlace?: InPlaceApprover;
}

/** Default {@link CodeModeCoreOptions.approvalTtlMs}: a day. */
export const DEFAULT_APPROVAL_TTL_MS = 24 * 60 * 60 * 1000;

/** Default {@link CodeModeCoreOptions.journalRetentionMs}: as long as the service keeps session logs by default. */
export const DEFAULT_JOURNAL_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export interface CodeMode {
  /** The limits every run is held to (defaults filled in); the prompt states these. */
  readonly limits: Readonly<CodeModeLimits>;
  /** The `.d.ts` the model is shown for the currently registered tools. */
  typings(): Promise<string>;
  /** The schemas the typings are made from: the registry's without run_code, `mayPause` on every gated tool (an approval rule's too). */
  toolSchemas(): ToolSchema[];
  /** Instructions and typings for the model; `''` in `'native'` mode. */
  prompt(): Promise<string>;
  /**
   * run_code as a framework-neutral tool, the shape every agent-framework
   * adapter builds on. Its description is the prompt for the tools
   * registered now: call it again after registering more.
   */
  asTool(): Promise<CodeModeTool>;
  /** Paused runs waiting for a decision (not expired), oldest first; `callIdPrefix` narrows them (a tenant's). */
  pending(callIdPrefix?: string): Promise<PausedRun[]>;
  /**
   * Decides the gated call of paused run `callId` and resumes it by replay: resolves the resumed
   * run's next outcome (done, failed, or paused again). Exactly one of concurrent decisions wins;
   * the others, and any decision on a run that is not paused, reject with `PtcError`
   * `RUN_NOT_PAUSED` (`RUN_NOT_FOUND` for an unknown run, `JOURNAL_CORRUPT` for one whose journal
   * cannot be read, `INVALID_ARGS` for a malformed decision). Past `approvalTtlMs` the call is
   * denied with reason `expired`, whatever the decision.
   */
  decide(callId: string, decision: ApprovalDecision, call?: DecideCall): Promise<CodeModeToolResult>;
  /**
   * Reverts the applied calls of run `callId` (paused, or resumed and ended) that have a `revert`,
   * newest first, and reports those it could not revert. Rejects like `decide` when the run is
   * unknown or not in a state to roll back.
   */
  rollback(callId: string, options?: { signal?: AbortSignal }): Promise<RollbackReport>;
  /** Where run `callId` stands (`paused`, `resuming`, `finished`, `rolled-back`) when it ever paused; undefined otherwise. Rejects `JOURNAL_CORRUPT` for a journal it cannot read. */
  durableStatus(callId: string): Promise<DurableRunStatus | undefined>;
  /** Unregisters run_code and removes the hooks code mode installed. Does not close a runtime it was given. */
  close(): Promise<void>;
}

/** How a decision's resumed run is called: like {@link CodeModeTool.execute}, with its own hook. */
export interface DecideCall extends Omit<CodeModeToolCall, 'callId' | 'sessionId'> {
  /**
   * Called once this decision has claimed the run, before the program runs again (a host records
   * the run there, so a losing decision records nothing). A rejection puts the run back, paused
   * and undecided, and the decision rejects with it.
   */
  claimed?(): Promise<void>;
}

export type { ApprovalDecision, DurableRunStatus, PausedRun, PendingCall, RollbackReport };

/** What {@link CodeModeTool.execute} resolves to. */
export interface CodeModeToolResult {
  /** `done`: the program ended (see `isError`); `paused`: it waits for a decision on `pending`. */
  status: 'done' | 'paused';
  /** What the model should see: the program's logs and result, or the failure with its logs. */
  content: ContentBlock[];
  isError: boolean;
  /** For the host, on success: `{ logs, result?, paused? }`, the canonical value. */
  value?: { logs: string[]; result?: JsonValue; paused?: PausedValue };
  /** When paused: the run's callId and the calls waiting for a decision. */
  paused?: PausedValue;
  /** On failure: the message (as in `content`) and its structured fields. */
  error?: { message: string; info?: ToolErrorInfo };
  /**
   * Contexts the run produced for the next model request (put them in front
   * of it): what tools injected with `exec.agent.inject`, in order, then what
   * post-execute hooks attached to the result and to its nested calls.
   * Absent when there are none.
   */
  contexts?: RunContext[];
}

export interface CodeModeToolCall {
  /** Cancels the run; its nested calls stop. */
  signal?: AbortSignal;
  /** The session the run's events go to. Default `"default"`. */
  sessionId?: string;
  /** Default: a fresh random id. */
  callId?: string;
  /**
   * Your agent, to hear each inject as it happens too. Whatever you pass,
   * injects are returned in `contexts` and (when the registry has an event
   * sink) appended to the session log as `agent/context` events.
   */
  agent?: Agent;
}

/** run_code for an agent framework: JSON Schemas in, rendered content and canonical value out. */
export interface CodeModeTool {
  readonly name: string;
  /** The prompt: how to write programs, the limits, and the typings of the tools. */
  readonly description: string;
  /** JSON Schema of the arguments: `{ code, description, timeoutMs? }`. */
  readonly inputSchema: JsonSchemaNode;
  /** JSON Schema of `value`: `{ logs, result? }`. */
  readonly outputSchema: JsonSchemaNode;
  /** Runs a program. Never rejects: a failure is `isError: true`. */
  execute(input: unknown, call?: CodeModeToolCall): Promise<CodeModeToolResult>;
}

export function createCodeModeCore(options: CodeModeCoreOptions): CodeMode {
  const { registry, runtime, typings } = options;
  const limits = Object.freeze(resolveLimits(options.limits));
  const mode = options.mode ?? 'code';
  const typecheck = options.typecheck ?? 'off';
  if (!(CODE_MODE_KINDS as readonly string[]).includes(mode)) throw new TypeError(`mode must be ${describeChoices(CODE_MODE_KINDS)} (got ${String(mode)})`);
  if (!(TYPECHECK_MODES as readonly string[]).includes(typecheck)) throw new TypeError(`typecheck must be ${describeChoices(TYPECHECK_MODES)} (got ${String(typecheck)})`);
  if (typecheck !== 'off' && typings === undefined) {
    throw new TypeError(`typecheck '${typecheck}' needs a typings service: pass typings, or set typecheck to 'off'`);
  }

  // Per instance: contexts hooks attached to a run's nested calls, by the run's token, until the run's own post-execute.
  const nestedContexts = new WeakMap<DispatchToken, HookContext[]>();
  const approvalTtlMs = options.approvalTtlMs ?? DEFAULT_APPROVAL_TTL_MS;
  if (!(Number.isSafeInteger(approvalTtlMs) && approvalTtlMs > 0)) throw new TypeError(`approvalTtlMs must be a positive whole number of milliseconds (got ${String(approvalTtlMs)})`);
  const journalRetentionMs = options.journalRetentionMs ?? DEFAULT_JOURNAL_RETENTION_MS;
  if (!(Number.isSafeInteger(journalRetentionMs) && journalRetentionMs > 0)) {
    throw new TypeError(`journalRetentionMs must be a positive whole number of milliseconds (got ${String(journalRetentionMs)})`);
  }
  const durable = new DurableRuns({
    registry,
    store: options.journal ?? createMemoryJournalStore(),
    ...(options.approvals === undefined ? {} : { approvals: options.approvals }),
    approvalTtlMs,
    journalRetentionMs,
    maxJournalValueBytes: limits.maxJournalValueBytes,
    now: options.now ?? Date.now,
  });
  const runCodeTool = createRunCodeTool({
    registry,
    nestedContexts,
    durable,
    runtime,
    limits,
    typecheck,
    ...(typings === undefined ? {} : { typings }),
    ...(options.onLog === undefined ? {} : { onLog: options.onLog }),
    ...(options.approveInPlace === undefined ? {} : { approveInPlace: options.approveInPlace }),
  }) as unknown as ToolDefinition;

  // Registered first: a registry that already has a run_code refuses it before any hook is installed.
  const disposers = [
    registry.register(runCodeTool),
    // Nested contexts are presentation for the next model request: they go on the run's result (and its tool/result), never to the program.
    registry.hook('tools/post-execute', (exec) => {
      if (exec.parent !== undefined || exec.name !== RUN_CODE) return undefined;
      const contexts = nestedContexts.get(exec.token);
      if (contexts === undefined) return undefined;
      nestedContexts.delete(exec.token);
      return { kind: 'accept', additionalContexts: contexts };
    }),
  ];
  if (mode === 'code') {
    disposers.push(
      registry.hook('tools/admit', ({ name, nested }) =>
        nested || name === RUN_CODE
          ? undefined
          : `tool ${JSON.stringify(name)} is only callable from a program: call run_code with code such as \`return await tools[${JSON.stringify(name)}]({})\``,
      ),
    );
  }

  // Tools gated by an approval rule are marked in the typings like those gated by their definition.
  const visibleSchemas = () =>
    registry
      .schemas()
      .filter((schema) => schema.name !== RUN_CODE)
      .map((schema) => (schema.mayPause === true || durable.approvalOf(schema.name) === undefined ? schema : { ...schema, mayPause: true as const }));
  const needTypings = (): TypingsService => {
    if (typings === undefined) throw new Error('code mode was created without a typings service: pass typings to get typings and a prompt');
    return typings;
  };
  const ownSchema = registry.schemas().find((schema) => schema.name === RUN_CODE)!;

  /** Dispatches run_code as an outer call, collecting the contexts of the run for the caller. */
  async function execute(input: unknown, call: CodeModeToolCall): Promise<CodeModeToolResult> {
    const injected: RunContext[] = [];
    const hear: Agent['inject'] = (context, origin) => {
      injected.push(injectedContext(context, origin));
      call.agent?.inject(context, origin);
    };
    const sink = registry.eventSink;
    const agent: Agent = sink === undefined ? { inject: hear } : createEventAgent(sink, (error, event) => registry.reportSinkError?.(error, event), hear);
    const result = await registry.dispatch({
      name: RUN_CODE,
      arguments: input,
      agent,
      ...(call.signal === undefined ? {} : { signal: call.signal }),
      ...(call.sessionId === undefined ? {} : { sessionId: call.sessionId }),
      ...(call.callId === undefined ? {} : { callId: call.callId }),
    });
    const contexts = [...injected, ...hookContexts(result.additionalContexts)];
    let out: CodeModeToolResult;
    if (result.isError) out = { status: 'done', content: result.content, isError: true, error: result.error };
    else {
      const value = result.value as unknown as NonNullable<CodeModeToolResult['value']>;
      out = value.paused === undefined ? { status: 'done', content: result.content, isError: false, value } : { status: 'paused', content: result.content, isError: false, value, paused: value.paused };
    }
    if (contexts.length > 0) out.contexts = contexts;
    return out;
  }

  return {
    limits,
    typings: async () => needTypings().typings(visibleSchemas()),
    toolSchemas: visibleSchemas,
    prompt: async () => (mode === 'native' ? '' : needTypings().prompt(visibleSchemas(), limits)),
    async asTool() {
      const description = await needTypings().prompt(visibleSchemas(), limits);
      return Object.freeze({
        name: RUN_CODE,
        description,
        inputSchema: ownSchema.parameters,
        outputSchema: ownSchema.output,
        execute: (input: unknown, call: CodeModeToolCall = {}) => execute(input, call),
      });
    },
    pending: (callIdPrefix = '') => durable.pending(callIdPrefix),
    async decide(callId, decision, { claimed: onClaimed, ...call } = {}) {
      const claimed = await durable.claimForDecision(callId, decision);
      try {
        await onClaimed?.();
        return await execute(claimed.run, { ...call, callId, sessionId: claimed.sessionId });
      } finally {
        await durable.releaseUnstarted(callId);
      }
    },
    rollback: (callId, rollbackOptions = {}) => durable.rollback(callId, rollbackOptions.signal),
    durableStatus: (callId) => durable.status(callId),
    async close() {
      for (const dispose of disposers.splice(0)) dispose();
    },
  };
}
