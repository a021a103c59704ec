/**
 * `run_code` as an ordinary canonical tool (DESIGN §7): it type-checks
 * (optionally), runs the program in the sandbox runtime with one stub per
 * registered tool, and returns `{ logs, result? }`. Every failure is a thrown
 * `CODE_RUN_FAILED` (or `ABORTED` when the outer signal fired), which the
 * registry turns into a failed result.
 */
import { defineTool } from '../define-tool.ts';
import { PtcError, type ErrorDetails } from '../errors.ts';
import type { JsonValue } from '../json.ts';
import type { SandboxFailure, SandboxRuntime } from '../sandbox-runtime.ts';
import type { ToolExec, ToolRegistry } from '../tool.ts';
import type { CodeModeLimits } from './limits.ts';
import { describeDiagnostic, describeFailure, describeTypecheckFailure, renderRunCode } from './render.ts';
import { RunScheduler } from './scheduler.ts';
import type { TypingsService } from './typings-service.ts';

export const RUN_CODE = 'run_code';
const FILENAME = 'agent.ts';

export type TypecheckMode = 'off' | 'warn' | 'enforce';

export interface RunCodeDeps {
  registry: ToolRegistry;
  runtime: SandboxRuntime;
  limits: CodeModeLimits;
  typings?: TypingsService;
  typecheck: TypecheckMode;
  onLog?(line: string, call: { callId: string; sessionId: string }): void;
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
  },
} as const;

export function createRunCodeTool(deps: RunCodeDeps) {
  const { registry, limits } = deps;
  // Explicit type arguments: inferring them through `type: 'json'` exceeds the compiler's instantiation depth.
  return defineTool<typeof RUN_CODE_PARAMETERS, typeof RUN_CODE_OUTPUT>({
    name: RUN_CODE,
    description:
      'Run a TypeScript/JavaScript program that calls the tools as async functions on `tools` and composes their values. ' +
      'Only its console output and its return value come back.',
    parameters: RUN_CODE_PARAMETERS,
    output: { schema: RUN_CODE_OUTPUT, render: (_args, value) => renderRunCode(value) },
    async execute(args, exec) {
      const timeoutMs = args.timeoutMs ?? limits.timeoutMs;
      if (!(Number.isInteger(timeoutMs) && timeoutMs >= 1 && timeoutMs <= limits.maxTimeoutMs)) {
        throw new PtcError('INVALID_ARGS', `timeoutMs must be a whole number of milliseconds from 1 to ${limits.maxTimeoutMs}; omit it for the default ${limits.timeoutMs}`);
      }
      const schemas = registry.schemas().filter((schema) => schema.name !== RUN_CODE);
      const prelude: string[] = [];
      if (deps.typecheck !== 'off' && deps.typings !== undefined) {
        const diagnostics = await deps.typings.check(args.code, schemas);
        if (diagnostics.length > 0 && deps.typecheck === 'enforce') {
          const first = diagnostics[0];
          throw new PtcError('CODE_RUN_FAILED', describeTypecheckFailure(diagnostics, args.code, FILENAME), { kind: 'typecheck', line: first.line, column: first.column });
        }
        for (const d of diagnostics) prelude.push(`[typecheck] ${describeDiagnostic(d, FILENAME)}`);
      }
      return runProgram(deps, args.code, timeoutMs, schemas.map((schema) => schema.name), prelude, exec as unknown as ToolExec);
    },
  });
}

async function runProgram(
  deps: RunCodeDeps,
  code: string,
  timeoutMs: number,
  toolNames: string[],
  prelude: string[],
  exec: ToolExec,
): Promise<{ logs: string[]; result?: JsonValue }> {
  const { limits } = deps;
  const scheduler = new RunScheduler({
    registry: deps.registry,
    runCallId: exec.callId,
    rootCallId: exec.rootCallId,
    sessionId: exec.sessionId,
    token: exec.token,
    ...(exec.agent === undefined ? {} : { agent: exec.agent }),
    maxCalls: limits.maxCalls,
    maxArgBytes: limits.maxArgBytes,
    maxParallelCalls: limits.maxParallelCalls,
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
      callTool: scheduler.callTool,
      limits: { timeoutMs, memoryMiB: limits.memoryMiB, maxLogBytes: limits.maxLogBytes, maxResultBytes: limits.maxResultBytes, maxArgBytes: limits.maxArgBytes },
      signal: exec.signal,
      ...(onLog === undefined ? {} : { onLog: (line: string) => onLog(line, call) }),
    });
  } finally {
    // The run is over: stop what is still in flight, drop what is queued, and wait for all of it.
    scheduler.close();
    await scheduler.settled();
  }
  const logs = [...prelude, ...outcome.logs];
  if (exec.signal.aborted) {
    throw new PtcError('ABORTED', `run_code was cancelled; its ${scheduler.submitted} nested call(s) have stopped`);
  }
  if (!outcome.ok) throw new PtcError('CODE_RUN_FAILED', describeFailure(outcome.failure, code, logs), failureDetails(outcome.failure, scheduler));
  if (outcome.resultJson === undefined) return { logs };
  return { logs, result: JSON.parse(outcome.resultJson) as JsonValue };
}

/** The structured fields of a failed run; the nested call only when this run really made it and it failed. */
function failureDetails(failure: SandboxFailure, scheduler: RunScheduler): ErrorDetails {
  const details: ErrorDetails = { kind: failure.kind };
  if (failure.line !== undefined) details.line = failure.line;
  if (failure.column !== undefined) details.column = failure.column;
  const toolName = failure.callId === undefined ? undefined : scheduler.failedCall(failure.callId);
  if (toolName !== undefined) {
    details.toolName = toolName;
    details.callId = failure.callId;
  }
  return details;
}
