/**
 * Result constructors and token binding. Every canonical result
 * the pipeline makes is frozen and bound to the token of the dispatch that
 * made it; a result bound to another token (a wrapper's cache) is
 * re-normalised before it is trusted.
 */
import type { ContentBlock } from './content.ts';
import { ERROR_CODES, isHttpErrorCode, type ErrorCode, type ErrorDetails } from './errors.ts';
import type { BusyCause, SandboxFailureKind } from './sandbox-runtime.ts';
import type { JsonValue } from './json.ts';
import type { DispatchToken, HookContext, ToolErrorInfo, ToolExecutionResult, ToolFailure, ToolSuccess } from './tool.ts';

/**
 * The token implementation. A token remembers the results its dispatch made
 * (a handful at most), so binding needs no WeakMap: the list dies with the
 * token when the dispatch is over. Private fields make tokens unforgeable
 * and stay usable on a frozen object.
 */
class Token {
  #first: object | undefined = undefined;
  #more: object[] | undefined = undefined;
  static isToken(x: unknown): boolean {
    return typeof x === 'object' && x !== null && #first in x;
  }
  static bind(token: Token, result: object): void {
    if (token.#first === undefined) token.#first = result;
    else (token.#more ??= []).push(result);
  }
  static owns(token: Token, result: object): boolean {
    return token.#first === result || (token.#more !== undefined && token.#more.includes(result));
  }
}

/** A new opaque, frozen token: one per dispatch. */
export function newToken(): DispatchToken {
  return Object.freeze(new Token()) as unknown as DispatchToken;
}

/** True for tokens this module issued (so `parent` cannot be forged). */
export function isToken(x: unknown): x is DispatchToken {
  return Token.isToken(x);
}

/** Binds a (frozen) result to the dispatch that made it; returns it. */
export function bind<R extends ToolExecutionResult>(result: R, token: DispatchToken): R {
  Token.bind(token as unknown as Token, result);
  return result;
}

/** True when `result` was made by the dispatch holding `token`. */
export function isBoundTo(result: object, token: DispatchToken): boolean {
  return Token.owns(token as unknown as Token, result);
}

/** A frozen success. `value`, `content` and `meta` must already be frozen snapshots. */
export function success(
  value: JsonValue,
  content: ContentBlock[],
  meta: JsonValue | undefined,
  additionalContexts?: HookContext[],
): ToolSuccess {
  const result: ToolSuccess = { isError: false, value, content };
  if (meta !== undefined) result.meta = meta;
  if (additionalContexts !== undefined) result.additionalContexts = additionalContexts;
  return Object.freeze(result);
}

/** A frozen failure whose content is `Error: <message>`. */
export function failure(code: ToolErrorInfo['code'], message: string, name = 'PtcError', details?: ErrorDetails): ToolFailure {
  return failureWith({ message, info: { ...details, name, code } }, textBlocks(`Error: ${message}`));
}

export function failureWith(
  error: { message: string; info?: ToolErrorInfo },
  content: ContentBlock[],
  additionalContexts?: HookContext[],
): ToolFailure {
  const info = error.info === undefined ? undefined : readErrorInfo(error.info);
  const frozenError = Object.freeze(info === undefined ? { message: error.message } : { message: error.message, info });
  const result: ToolFailure = { isError: true, error: frozenError, content };
  if (additionalContexts !== undefined) result.additionalContexts = additionalContexts;
  return Object.freeze(result);
}

/** The failure for a broken output declaration (`ToolOutputError`). */
export function outputFailure(message: string): ToolFailure {
  return failure('INVALID_TOOL_OUTPUT', message, 'ToolOutputError');
}

/** The failure for a body that threw: `Error: <message>`, code `TOOL_FAILED` unless it threw a coded project error. */
export function thrownFailure(thrown: unknown): ToolFailure {
  const { name, message, code, details } = describeThrown(thrown);
  return failure(code, message, name, details);
}

const PROJECT_ERROR_NAMES = new Set(['PtcError', 'ToolOutputError']);

/** Reads a thrown value defensively: getters and `toString` may throw. */
export function describeThrown(thrown: unknown): { name: string; message: string; code: ErrorCode; details?: ErrorDetails } {
  let name = 'Error';
  let message: string | undefined;
  let code: ErrorCode = 'TOOL_FAILED';
  let details: ErrorDetails | undefined;
  try {
    if (thrown instanceof Error) {
      const n: unknown = thrown.name;
      if (typeof n === 'string' && n !== '') name = n;
      const m: unknown = thrown.message;
      message = typeof m === 'string' ? m : undefined;
      const c: unknown = (thrown as { code?: unknown }).code;
      if (PROJECT_ERROR_NAMES.has(name) && typeof c === 'string' && isErrorCode(c)) {
        code = c;
        const d: unknown = (thrown as { details?: unknown }).details;
        if (typeof d === 'object' && d !== null) details = readDetails(d as Record<string, unknown>);
      }
    } else {
      message = String(thrown);
    }
  } catch {
    message = undefined;
  }
  if (message === undefined || message === '') message = 'the tool failed without a readable message';
  return details === undefined ? { name, message, code } : { name, message, code, details };
}

const FAILURE_KINDS: ReadonlySet<string> = new Set<SandboxFailureKind>([
  'syntax', 'typecheck', 'exception', 'timeout', 'abort', 'memory', 'output-limit', 'call-limit', 'invalid-output', 'crashed', 'busy', 'replay-divergence',
]);
const BUSY_CAUSES: ReadonlySet<string> = new Set<BusyCause>(['compute', 'memory', 'queue-full', 'starting', 'closed']);
/** Longest toolName or callId kept in an error's info (both come from registered names and host-made ids). */
const MAX_ID_LENGTH = 512;

/**
 * A frozen {@link ToolErrorInfo} holding only the known fields of `info`
 * that have the right type, so a result a wrapper made up cannot smuggle
 * other data into a failure; undefined when name or code is missing.
 */
export function readErrorInfo(info: unknown): ToolErrorInfo | undefined {
  if (typeof info !== 'object' || info === null) return undefined;
  const i = info as Record<string, unknown>;
  if (typeof i.name !== 'string' || typeof i.code !== 'string') return undefined;
  return Object.freeze({ name: i.name, code: i.code, ...readDetails(i) });
}

function readDetails(d: Record<string, unknown>): ErrorDetails {
  const out: ErrorDetails = {};
  if (typeof d.kind === 'string' && FAILURE_KINDS.has(d.kind)) out.kind = d.kind as SandboxFailureKind;
  if (typeof d.busy === 'string' && BUSY_CAUSES.has(d.busy)) out.busy = d.busy as BusyCause;
  if (Number.isSafeInteger(d.line) && (d.line as number) > 0) out.line = d.line as number;
  if (Number.isSafeInteger(d.column) && (d.column as number) > 0) out.column = d.column as number;
  if (typeof d.toolName === 'string' && d.toolName.length <= MAX_ID_LENGTH) out.toolName = d.toolName;
  if (typeof d.callId === 'string' && d.callId.length <= MAX_ID_LENGTH) out.callId = d.callId;
  if (Number.isSafeInteger(d.status) && (d.status as number) >= 100 && (d.status as number) <= 599) out.status = d.status as number;
  return out;
}

function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code) || isHttpErrorCode(code);
}

function textBlocks(text: string): ContentBlock[] {
  return Object.freeze([Object.freeze({ type: 'text', text })]) as unknown as ContentBlock[];
}

/** The error code a result carries, if any. */
export function codeOf(result: ToolExecutionResult): string | undefined {
  return result.isError ? result.error.info?.code : undefined;
}
