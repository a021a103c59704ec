/**
 * The error catalogue: every stable code this project emits, what it means and
 * how to fix it. Codes are never reused; docs/errors.md mirrors this table and
 * a test keeps the two in step.
 */
import type { BusyCause, SandboxFailureKind } from './sandbox-runtime.ts';

export const ERROR_CODES = {
  UNKNOWN_TOOL: {
    description: 'No tool of that name is registered, or it is not callable this way.',
    fix: 'Call one of the listed tools by its exact name (in code mode, call tools from inside run_code).',
  },
  INVALID_ARGS: {
    description: "The arguments are not lossless JSON, do not match the tool's parameter schema, or (from run_code) are over the size limit for one call.",
    fix: 'Pass one JSON object (such as `{}`) whose keys and types match the tool typings; split data over the size limit across several calls.',
  },
  INVALID_TOOL_OUTPUT: {
    description: "The tool's value, renderer or presentation metadata broke its output declaration.",
    fix: 'Tool authors: return a value matching output.schema; make render and presentationMeta pure and total.',
  },
  CODE_RUN_FAILED: {
    description: 'A run_code program failed (syntax, exception, timeout, memory, limits, …); `info.kind` names the kind, `info.line`/`info.column` the place when known.',
    fix: 'Read the kind, line:column and logs in the message, fix the program and run it again.',
  },
  ABORTED: {
    description: 'The call was cancelled while it ran.',
    fix: 'Nothing to fix: run it again if the result is still wanted.',
  },
  ABORTED_BEFORE_DISPATCH: {
    description: 'The call was cancelled before its body started; nothing ran.',
    fix: 'Nothing to fix: run it again if the result is still wanted.',
  },
  TOOL_TIMEOUT: {
    description: "The tool ran past its time limit and was aborted.",
    fix: 'Ask for less work per call (page through results), or raise the tool timeoutMs.',
  },
  BLOCKED: {
    description: 'A post-execute policy blocked the result.',
    fix: 'Read the feedback in the message; do not retry the same call unchanged.',
  },
  TOOL_FAILED: {
    description: 'The tool body threw.',
    fix: 'Read the message; correct the arguments or the state the tool depends on.',
  },
  RUN_LOST: {
    description: 'The service replica running the call stopped heartbeating before it finished (it crashed or lost the database); another replica ended the session log with this result.',
    fix: 'Events appended before the loss are kept: read them, then run the call again if it is safe to repeat.',
  },
  APPROVAL_DENIED: {
    description: "A call that needed approval was denied (by a person, or with reason `expired` or `timeout`); it did not run. Thrown inside the program as a ToolCallError, which it may catch.",
    fix: 'Go on without the call, or ask the user; do not repeat it unchanged.',
  },
  RUN_NOT_FOUND: {
    description: 'No paused or resumed run has that callId (for this tenant).',
    fix: 'Use the callId of a paused run, as listed by GET /v1/approvals (codeMode.pending()).',
  },
  RUN_NOT_PAUSED: {
    description: 'The run is not in a state that takes this request: a decision needs a paused run (it was already decided, or is resuming); a rollback needs a paused or finished run that is not already rolled back.',
    fix: 'Read the run again (GET /v1/runs/:callId); nothing was changed.',
  },
  JOURNAL_CORRUPT: {
    description: "A paused run's stored journal cannot be read (truncated, edited, or another format); nothing was run.",
    fix: 'Start the work again as a new run; operators: look at the file named in the service log.',
  },
} as const;

/** An OpenAPI tool's failed response, by its status (`HTTP_404`, `HTTP_500`): the call reached the API, which refused it. */
export type HttpErrorCode = `HTTP_${number}`;

export type ErrorCode = keyof typeof ERROR_CODES | HttpErrorCode;

/** `HTTP_100` to `HTTP_599`. */
export function isHttpErrorCode(code: string): code is HttpErrorCode {
  return /^HTTP_[1-5][0-9]{2}$/.test(code);
}

/**
 * What a failure says beyond its name and code, as fields (never to be parsed
 * back out of the message). Each is present only when it applies and is known.
 */
export interface ErrorDetails {
  /** `CODE_RUN_FAILED`: how the run failed (`syntax`, `typecheck`, `exception`, `timeout`, `memory`, `busy`, …). */
  kind?: SandboxFailureKind;
  /** `CODE_RUN_FAILED` of kind `busy`: what the run lacked (`compute`, `memory`, `queue-full`, `starting`, `closed`). */
  busy?: BusyCause;
  /** `CODE_RUN_FAILED`: 1-based line in the model's program. */
  line?: number;
  /** `CODE_RUN_FAILED`: 1-based column in the model's program. */
  column?: number;
  /** `CODE_RUN_FAILED` from an uncaught `ToolCallError`: the nested tool that failed. */
  toolName?: string;
  /** `CODE_RUN_FAILED` from an uncaught `ToolCallError`: the nested call's callId (its `tool/ptc-dispatch` event). */
  callId?: string;
  /** `HTTP_<status>`: the status the API answered. */
  status?: number;
}

/** An error that crosses a boundary: always a stable code and a message, and optionally {@link ErrorDetails}. */
export class PtcError extends Error {
  override name = 'PtcError';
  readonly code: ErrorCode;
  readonly details: Readonly<ErrorDetails> | undefined;
  constructor(code: ErrorCode, message: string, details?: ErrorDetails) {
    super(message);
    this.code = code;
    this.details = details === undefined ? undefined : Object.freeze({ ...details });
  }
}

/** The failure a tool result carries when its output declaration was broken. */
export class ToolOutputError extends Error {
  override name = 'ToolOutputError';
  readonly code = 'INVALID_TOOL_OUTPUT' as const;
  readonly violations: readonly string[];
  constructor(message: string, violations: readonly string[] = []) {
    super(message);
    this.violations = violations;
  }
}
