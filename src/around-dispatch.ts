/**
 * Around-dispatch (`tools/execute`): wrappers, the per-definition deadline
 * (the innermost wrapper), the body, and re-normalisation of results that
 * do not belong to this dispatch.
 */
import type { JsonValue } from './json.ts';
import { projectOutput, checkContent, type OutputDeclaration } from './project-output.ts';
import { bind, describeThrown, failure, failureWith, isBoundTo, readErrorInfo, thrownFailure } from './results.ts';
import type { ExecuteHook, ToolDefinition, ToolErrorInfo, ToolExec, ToolExecutionResult, WrapperExec } from './tool.ts';

/** A registered tool as the pipeline uses it. */
export interface ToolEntry extends OutputDeclaration {
  readonly definition: ToolDefinition<unknown, unknown>;
  /** Present when the definition asks for argument validation. */
  validateArgs?(args: JsonValue): string[];
  readonly timeoutMs?: number;
}

/** One dispatch after its exec is built. */
export interface Call {
  readonly entry: ToolEntry;
  readonly exec: ToolExec;
  readonly outer: boolean;
}

/** Runs wrappers → deadline → body. The result is always bound to this dispatch's token. */
export function runAroundDispatch(call: Call, wrappers: readonly ExecuteHook[]): Promise<ToolExecutionResult> {
  return runFrom(call, wrappers, 0, call.exec.signal);
}

function runFrom(call: Call, wrappers: readonly ExecuteHook[], index: number, signal: AbortSignal): Promise<ToolExecutionResult> {
  return index < wrappers.length ? runLayer(call, wrappers, index, signal) : runInner(call, signal);
}

async function runLayer(
  call: Call,
  wrappers: readonly ExecuteHook[],
  index: number,
  signal: AbortSignal,
): Promise<ToolExecutionResult> {
  const view = wrapperView(call.exec, signal);
  const next = (): Promise<ToolExecutionResult> => {
    return runFrom(call, wrappers, index + 1, combine(signal, view.signal));
  };
  let returned: unknown;
  try {
    returned = await wrappers[index](view, next);
  } catch (error) {
    return bind(failure('TOOL_FAILED', `a tools/execute hook threw: ${describeThrown(error).message}`, 'HookError'), call.exec.token);
  }
  return adopt(call, returned);
}

/**
 * The exec a wrapper sees: a frozen copy of the exec whose `signal` is an
 * accessor (on the prototype, so the view stays cheap to build) that accepts
 * only another AbortSignal: it can be replaced, never removed.
 */
class WrapperView {
  #signal: AbortSignal;
  constructor(exec: ToolExec, signal: AbortSignal) {
    this.#signal = signal;
    const self = this as unknown as Record<string, unknown>;
    self.callId = exec.callId;
    self.rootCallId = exec.rootCallId;
    self.sessionId = exec.sessionId;
    self.name = exec.name;
    self.arguments = exec.arguments;
    self.token = exec.token;
    if (exec.agent !== undefined) self.agent = exec.agent;
    if (exec.parent !== undefined) self.parent = exec.parent;
    Object.freeze(this);
  }
  get signal(): AbortSignal {
    return this.#signal;
  }
  set signal(next: AbortSignal) {
    if (!(next instanceof AbortSignal)) {
      throw new TypeError('exec.signal must stay an AbortSignal: replace it (for example with AbortSignal.any) but never remove it');
    }
    this.#signal = next;
  }
}

function wrapperView(exec: ToolExec, signal: AbortSignal): WrapperExec {
  return new WrapperView(exec, signal) as unknown as WrapperExec;
}

function combine(outer: AbortSignal, own: AbortSignal): AbortSignal {
  return outer === own ? outer : AbortSignal.any([outer, own]);
}

function runInner(call: Call, signal: AbortSignal): Promise<ToolExecutionResult> {
  const ms = call.entry.timeoutMs;
  return ms === undefined ? runBody(call, signal) : runWithDeadline(call, signal, ms);
}

/** The built-in innermost wrapper: aborts the body after `timeoutMs`, waits for it, reports `TOOL_TIMEOUT`. */
async function runWithDeadline(call: Call, signal: AbortSignal, ms: number): Promise<ToolExecutionResult> {
  // One controller that the outer signal and the timer both abort: AbortSignal.any costs several times as much, on every call.
  const bodyController = new AbortController();
  const forward = () => bodyController.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    bodyController.abort(new DOMException(`timed out after ${ms} ms`, 'TimeoutError'));
  }, ms);
  let result: ToolExecutionResult;
  try {
    result = await runBody(call, bodyController.signal);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', forward);
  }
  if (timedOut && !signal.aborted && result.isError && result.error.info?.code === 'ABORTED') {
    return bind(
      failure('TOOL_TIMEOUT', `tool "${call.exec.name}" ran past its ${ms} ms time limit and was stopped: ask for less work per call`),
      call.exec.token,
    );
  }
  return result;
}

async function runBody(call: Call, signal: AbortSignal): Promise<ToolExecutionResult> {
  const { exec, entry } = call;
  if (signal.aborted) return bind(abortedBefore(exec.name), exec.token);
  const bodyExec = signal === exec.signal ? exec : Object.freeze({ ...exec, signal });
  let raw: unknown;
  let threw = false;
  let thrown: unknown;
  try {
    raw = await entry.definition.execute(exec.arguments, bodyExec);
  } catch (error) {
    threw = true;
    thrown = error;
  }
  // Reported only now that the body has settled: nothing it started is still running.
  if (signal.aborted) {
    // A body that reports its own cancellation keeps its account (run_code's carries the program's logs).
    const own = threw ? thrownFailure(thrown) : undefined;
    if (own !== undefined && own.error.info?.code === 'ABORTED') return bind(own, exec.token);
    return bind(failure('ABORTED', `tool "${exec.name}" was cancelled while it ran and has stopped`), exec.token);
  }
  const result = threw ? thrownFailure(thrown) : projectOutput(entry, exec.arguments, raw, call.outer);
  return bind(result, exec.token);
}

export function abortedBefore(name: string): ToolExecutionResult {
  return failure('ABORTED_BEFORE_DISPATCH', `tool "${name}" was cancelled before it started; nothing ran`);
}

/**
 * Makes a wrapper's return value a result of this dispatch. A result of this
 * dispatch passes as is; a success from elsewhere (a cache, a wrapper's own
 * object) is re-projected from its value through the current tool's output
 * declaration, its content and meta dropped; a failure from elsewhere is
 * copied as a failure.
 */
export function adopt(call: Call, returned: unknown): ToolExecutionResult {
  const token = call.exec.token;
  if (typeof returned !== 'object' || returned === null) {
    return bind(notAResult(), token);
  }
  if (isBoundTo(returned, token)) return returned as ToolExecutionResult;
  let isError: unknown;
  let value: unknown;
  let error: unknown;
  let content: unknown;
  try {
    const r = returned as Record<string, unknown>;
    isError = r.isError;
    value = r.value;
    error = r.error;
    content = r.content;
  } catch {
    return bind(notAResult(), token);
  }
  if (isError === false) return bind(projectOutput(call.entry, call.exec.arguments, value, call.outer), token);
  if (isError !== true) return bind(notAResult(), token);
  try {
    return bind(copyFailure(error, content), token);
  } catch {
    return bind(notAResult(), token);
  }
}

function copyFailure(error: unknown, content: unknown): ToolExecutionResult {
  const e = (typeof error === 'object' && error !== null ? error : {}) as { message?: unknown; info?: unknown };
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : 'the call failed without a readable message';
  const info: ToolErrorInfo | undefined = readErrorInfo(e.info);
  const checked = checkContent(content, 'content');
  if (typeof checked === 'string') return info === undefined ? failure('TOOL_FAILED', message) : failure(info.code, message, info.name, info);
  return failureWith(info === undefined ? { message } : { message, info }, checked);
}

function notAResult(): ToolExecutionResult {
  return failure(
    'TOOL_FAILED',
    'a tools/execute hook returned something that is not a tool result: return what next() resolved to, or a result object',
    'HookError',
  );
}
