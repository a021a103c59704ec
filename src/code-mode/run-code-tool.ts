/**
 * `run_code` as an ordinary canonical tool (docs/architecture.md, "Code Mode"): it type-checks
 * (optionally), runs the program in the sandbox runtime with one stub per
 * registered tool, and returns `{ logs, result? }`. Every failure is a thrown
 * `CODE_RUN_FAILED` (or `ABORTED` when the outer signal fired), which the
 * registry turns into a failed result.
 */
import { defineTool } from '../define-tool.ts';
import { PtcError, type ErrorDetails } from '../errors.ts';
import type { JsonValue } from '../json.ts';
import type { SandboxFailure, SandboxRuntime } from '../sandbox-runtime.ts';
import type { DispatchToken, HookContext, ToolExec, ToolRegistry, ToolSchema } from '../tool.ts';
import type { QueueOwner } from '../fair-queue.ts';
import type { TypecheckMode } from './choices.ts';
import type { CodeModeLimits } from './limits.ts';
import { describeCancellation, describeDiagnostic, describeFailure, describeTypecheckFailure, renderRunCode } from './render.ts';
import { RunScheduler, type RunSchedulerOptions } from './scheduler.ts';
import type { DurableRuns, PausedValue } from './durable-runs.ts';
import type { InPlaceApprover } from './in-place-approval.ts';
import type { TypecheckDiagnostic, TypingsService } from './typings-service.ts';
import { runChannel, traceWithin, typecheckChannel, type RunMessage, type TypecheckMessage } from '../tracing.ts';

export const RUN_CODE = 'run_code';
const FILENAME = 'agent.ts';

export type { TypecheckMode } from './choices.ts';

export interface RunCodeDeps {
  registry: ToolRegistry;
  runtime: SandboxRuntime;
  limits: CodeModeLimits;
  typings?: TypingsService;
  typecheck: TypecheckMode;
  onLog?(line: string, call: { callId: string; sessionId: string }): void;
  /**
   * Where a run leaves the contexts post-execute hooks attached to its nested
   * calls, by the run's token; code mode's own post-execute hook moves them
   * onto the run's result (they never reach the program).
   */
  nestedContexts?: WeakMap<DispatchToken, HookContext[]>;
  /** Journals, pauses and resumes runs whose tools may need approval. */
  durable?: DurableRuns;
  /** Asks for a gated call's decision while the run waits, before pausing it. */
  approveInPlace?: InPlaceApprover;
}

const RUN_CODE_PARAMETERS = {
  code: { type: 'string', required: true, description: 'The body of an async function: top-level await; `return` sets the result.' },
  description: { type: 'string', required: true, description: 'One short line saying what the program does.' },
  timeoutMs: { type: 'integer', description: 'Wall-time limit in milliseconds, tool calls included (the configured default when omitted).' },
} as const;

const RUN_CODE_OUTPUT = {
  type: 'object',
  additionalProperties: false,
  properties: {
    logs: { type: 'array', items: { type: 'string' }, required: true },
    result: { type: 'json', description: 'The returned value; absent when the program returned nothing.' },
    paused: {
      type: 'json',
      description: 'Present when the run paused for approval: { callId, pending: [{ seq, toolName, args }], expiresAt }. A decision resumes it.',
    },
  },
} as const;

export function createRunCodeTool(deps: RunCodeDeps) {
  const { limits } = deps;
  // Explicit type arguments: inferring them through `type: 'json'` exceeds the compiler's instantiation depth.
  return defineTool<typeof RUN_CODE_PARAMETERS, typeof RUN_CODE_OUTPUT>({
    name: RUN_CODE,
    description:
      'Run a TypeScript/JavaScript program that calls the tools as async functions on `tools` and composes their values. ' +
      'Only its console output and its return value come back.',
    parameters: RUN_CODE_PARAMETERS,
    output: { schema: RUN_CODE_OUTPUT, render: (_args, value) => renderRunCode(value, limits.maxRenderedBytes) },
    execute(args, exec) {
      if (!runChannel.hasSubscribers) return runCode(deps, args, exec as unknown as ToolExec, undefined);
      const message: RunMessage = {
        callId: exec.callId,
        rootCallId: exec.rootCallId,
        sessionId: exec.sessionId,
        trace: exec.trace,
        bytesIn: Buffer.byteLength(args.code),
      };
      return traceWithin(runChannel, message, () => runCode(deps, args, exec as unknown as ToolExec, message));
    },
  });
}

async function runCode(
  deps: RunCodeDeps,
  args: { code: string; description: string; timeoutMs?: number },
  exec: ToolExec,
  trace: RunMessage | undefined,
): Promise<{ logs: string[]; result?: JsonValue; paused?: JsonValue }> {
  const { registry, limits } = deps;
  const timeoutMs = args.timeoutMs ?? limits.timeoutMs;
  if (!(Number.isInteger(timeoutMs) && timeoutMs >= 1 && timeoutMs <= limits.maxTimeoutMs)) {
    throw new PtcError('INVALID_ARGS', `timeoutMs must be a whole number of milliseconds from 1 to ${limits.maxTimeoutMs}; omit it for the default ${limits.timeoutMs}`);
  }
  const schemas = registry.schemas().filter((schema) => schema.name !== RUN_CODE);
  const prelude: string[] = [];
  let runMs = timeoutMs;
  const { typecheck: mode, typings } = deps;
  if (mode !== 'off' && typings !== undefined) {
    const started = performance.now();
    const check = (): Promise<string[]> =>
      typecheckProgram(typings, mode, args.code, schemas, timeoutMs, exec.signal, { sessionId: exec.sessionId, runId: exec.callId });
    const checked = typecheckChannel.hasSubscribers
      ? typecheckChannel.tracePromise(check, { callId: exec.callId, sessionId: exec.sessionId, mode } satisfies TypecheckMessage)
      : check();
    prelude.push(...(await checked));
    // The check's time is the run's time: what is left of timeoutMs is the program's.
    runMs = Math.max(1, timeoutMs - Math.ceil(performance.now() - started));
  }
  return runProgram(deps, args, runMs, schemas.map((schema) => schema.name), prelude, exec, trace);
}

/**
 * Type-checks the program within its share of the run's time. `enforce` gets the whole of
 * `timeoutMs` and fails the run (kind `typecheck`) on diagnostics or on a check that did not
 * complete; `warn` gets half, so an advisory check never leaves the program without time, and a
 * check that did not complete becomes one log line saying the program ran unchecked.
 * Returns the lines to put at the top of the logs.
 */
async function typecheckProgram(
  typings: TypingsService,
  mode: 'warn' | 'enforce',
  code: string,
  schemas: readonly ToolSchema[],
  timeoutMs: number,
  signal: AbortSignal,
  owner: QueueOwner,
): Promise<string[]> {
  let diagnostics: TypecheckDiagnostic[];
  try {
    diagnostics = await typings.check(code, schemas, { timeoutMs: mode === 'enforce' ? timeoutMs : Math.ceil(timeoutMs / 2), signal, owner });
  } catch (error) {
    if (signal.aborted) throw new PtcError('ABORTED', 'run_code was cancelled during its type-check; nothing ran');
    // Only the pool's own errors are written for the model; anything else could carry host details.
    const why = error instanceof Error && error.name === 'TypecheckIncompleteError' ? error.message : 'the type-checker failed';
    if (mode === 'enforce') {
      throw new PtcError('CODE_RUN_FAILED', `code run failed (typecheck): the program could not be type-checked, so nothing ran: ${why}`, { kind: 'typecheck' });
    }
    return [`[typecheck] not checked, the program ran anyway: ${why}`];
  }
  if (diagnostics.length > 0 && mode === 'enforce') {
    const first = diagnostics[0];
    throw new PtcError('CODE_RUN_FAILED', describeTypecheckFailure(diagnostics, code, FILENAME), { kind: 'typecheck', line: first.line, column: first.column });
  }
  return diagnostics.map((d) => `[typecheck] ${describeDiagnostic(d, FILENAME)}`);
}

async function runProgram(
  deps: RunCodeDeps,
  args: { code: string; description: string; timeoutMs?: number },
  timeoutMs: number,
  toolNames: string[],
  prelude: string[],
  exec: ToolExec,
  trace: RunMessage | undefined,
): Promise<{ logs: string[]; result?: JsonValue; paused?: JsonValue }> {
  const { limits, durable } = deps;
  const { code } = args;
  const journal = durable?.journalFor(exec.callId, toolNames);
  const scheduler = new RunScheduler({
    registry: deps.registry,
    runCallId: exec.callId,
    rootCallId: exec.rootCallId,
    sessionId: exec.sessionId,
    token: exec.token,
    ...(exec.agent === undefined ? {} : { agent: exec.agent }),
    ...(deps.nestedContexts === undefined ? {} : { onContexts: collectInto(deps.nestedContexts, exec.token) }),
    maxCalls: limits.maxCalls,
    maxArgBytes: limits.maxArgBytes,
    maxParallelCalls: limits.maxParallelCalls,
    ...(journal === undefined ? {} : { journal, now: () => durable!.now(), deadlineAt: durable!.now() + timeoutMs }),
    ...(journal === undefined || deps.approveInPlace === undefined ? {} : { approveInPlace: inPlaceFor(deps.approveInPlace, exec) }),
  });
  const onLog = deps.onLog;
  const call = { callId: exec.callId, sessionId: exec.sessionId };
  for (const line of prelude) onLog?.(line, call);
  let outcome;
  try {
    outcome = await deps.runtime.run({
      code,
      filename: FILENAME,
      toolNames,
      // Only a named session may keep an isolate for its next run: session `default` is every caller's.
      ...(exec.sessionNamed === true ? { sessionId: exec.sessionId } : {}),
      callTool: scheduler.callTool,
      limits: { timeoutMs, memoryMiB: limits.memoryMiB, maxLogBytes: limits.maxLogBytes, maxResultBytes: limits.maxResultBytes, maxArgBytes: limits.maxArgBytes },
      signal: exec.signal,
      ...(onLog === undefined ? {} : { onLog: (line: string) => onLog(line, call) }),
      ...(journal === undefined ? {} : { recordReads: { replay: journal.replayReads } }),
    });
  } finally {
    // The run is over: stop what is still in flight, drop what is queued, and wait for all of it.
    scheduler.close();
    await scheduler.settled();
    if (trace !== undefined) trace.calls = scheduler.submitted;
  }
  const logs = [...prelude, ...outcome.logs];
  if (journal !== undefined) {
    const gate = scheduler.pausedAt;
    if (gate !== undefined && !exec.signal.aborted) {
      const run = { callId: exec.callId, sessionId: exec.sessionId, code, description: args.description, ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs }) };
      const paused: PausedValue = await durable!.pause(run, journal, gate);
      return { logs, paused: paused as unknown as JsonValue };
    }
    await durable!.finish(journal);
  }
  if (exec.signal.aborted) {
    throw new PtcError('ABORTED', describeCancellation(scheduler.submitted, logs));
  }
  if (!outcome.ok) throw new PtcError('CODE_RUN_FAILED', describeFailure(outcome.failure, code, logs), failureDetails(outcome.failure, scheduler));
  if (trace !== undefined) trace.bytesOut = outcome.resultJson === undefined ? 0 : Buffer.byteLength(outcome.resultJson);
  if (outcome.resultJson === undefined) return { logs };
  return { logs, result: JSON.parse(outcome.resultJson) as JsonValue };
}

function collectInto(store: WeakMap<DispatchToken, HookContext[]>, token: DispatchToken): (contexts: HookContext[]) => void {
  return (contexts) => {
    const list = store.get(token);
    if (list === undefined) store.set(token, [...contexts]);
    else list.push(...contexts);
  };
}

/** The structured fields of a failed run; the nested call only when this run really made it and it failed. */
function failureDetails(failure: SandboxFailure, scheduler: RunScheduler): ErrorDetails {
  const details: ErrorDetails = { kind: failure.kind };
  if (failure.busy !== undefined) details.busy = failure.busy;
  if (failure.line !== undefined) details.line = failure.line;
  if (failure.column !== undefined) details.column = failure.column;
  const toolName = failure.callId === undefined ? undefined : scheduler.failedCall(failure.callId);
  if (toolName !== undefined) {
    details.toolName = toolName;
    details.callId = failure.callId;
  }
  return details;
}

/** The run's in-place approver, told which run and session each gated call belongs to. */
function inPlaceFor(approver: InPlaceApprover, exec: ToolExec): NonNullable<RunSchedulerOptions['approveInPlace']> {
  return (call) => approver({ ...call, runCallId: exec.callId, sessionId: exec.sessionId });
}
