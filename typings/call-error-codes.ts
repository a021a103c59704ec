/**
 * The codes a failed nested call can carry (`ToolCallError.code`), each with
 * what it means for the program. Every code of the catalogue except
 * `CODE_RUN_FAILED` (run_code is not callable from a program), `RUN_LOST`
 * (the service writes it when the whole run is gone) and the durable runs'
 * codes a host meets (deciding, rolling back, reading a journal); the record type
 * makes a new catalogue code a compile error here until it is explained.
 */
import type { ErrorCode, HttpErrorCode } from '../src/errors.ts';

export type CallErrorCode = Exclude<ErrorCode, 'CODE_RUN_FAILED' | 'RUN_LOST' | 'RUN_NOT_FOUND' | 'RUN_NOT_PAUSED' | 'JOURNAL_CORRUPT' | HttpErrorCode>;

export const CALL_ERROR_CODES: Readonly<Record<CallErrorCode, string>> = {
  UNKNOWN_TOOL: 'no tool has that name: use a key of `tools` exactly as typed',
  INVALID_ARGS: 'the arguments do not match `ToolArgsMap`, are not lossless JSON, or are over the size limit for one call; the message lists what is wrong',
  INVALID_TOOL_OUTPUT: 'the tool broke its own output declaration; not your mistake, do not retry unchanged',
  ABORTED: 'the run was cancelled while the call ran',
  ABORTED_BEFORE_DISPATCH: 'the run was cancelled before the call started; nothing ran',
  TOOL_TIMEOUT: 'the tool ran past its time limit; ask for less work per call',
  BLOCKED: 'a policy blocked the result; read the message and do not retry unchanged',
  TOOL_FAILED: 'the tool itself failed; the message says why (a missing file, a bad pattern, …)',
  APPROVAL_DENIED: 'the call needed a person\'s approval and was denied (the message gives the reason); it did not run: go on without it',
};

export const CALL_ERROR_CODE_LIST = Object.keys(CALL_ERROR_CODES) as CallErrorCode[];

/** The codes of a failed HTTP response (OpenAPI tools), as the typings and the prompt name them. */
export const HTTP_CALL_ERROR_TYPE = '`HTTP_${number}`';
export const HTTP_CALL_ERROR_NOTE = "an OpenAPI tool's API answered with that status (`HTTP_404`: not found, `HTTP_429`: too many requests, …); the message quotes the start of its body";
