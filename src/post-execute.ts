/**
 * Post-execute (`tools/post-execute`): hooks run in registration order, each
 * seeing the result the previous one left. Decisions: replace `content`
 * (presentation only), replace `value` (re-projected), attach contexts only,
 * or `block`. Any of them may attach `additionalContexts`: they are appended
 * to those already on the result, except that replacing the value or
 * blocking starts the list afresh (earlier contexts may describe the value
 * that is gone). A hook that throws or returns a malformed decision
 * withholds the result, contexts included (fail closed): the call becomes
 * an `INVALID_TOOL_OUTPUT` failure naming the hook.
 */
import { readHookContexts } from './contexts.ts';
import type { Call } from './around-dispatch.ts';
import { checkContent, projectOutput } from './project-output.ts';
import { bind, describeThrown, failure, failureWith, success } from './results.ts';
import type { HookContext, PostExecuteHook, ToolExecutionResult } from './tool.ts';

export interface PostExecuteOutcome {
  result: ToolExecutionResult;
  /** A hook replaced the value (spill projection skips such results). */
  valueReplaced: boolean;
}

/**
 * Runs the hooks. Synchronous while every hook answers synchronously (code
 * mode's own hook passes every nested call at once), so the common case
 * costs the dispatch no extra turns; from the first hook that answers with a
 * promise on, the rest run asynchronously.
 */
export function runPostExecute(
  call: Call,
  hooks: readonly PostExecuteHook[],
  initial: ToolExecutionResult,
): PostExecuteOutcome | Promise<PostExecuteOutcome> {
  const state: PostExecuteOutcome = { result: initial, valueReplaced: false };
  for (let i = 0; i < hooks.length; i++) {
    let answered: unknown;
    try {
      answered = hooks[i](call.exec, state.result);
      if (isThenable(answered)) return finishAsync(call, hooks, i, answered, state);
    } catch (error) {
      state.result = hookError(call, `threw: ${describeThrown(error).message}`);
      continue;
    }
    decide(call, state, answered);
  }
  return state;
}

async function finishAsync(
  call: Call,
  hooks: readonly PostExecuteHook[],
  index: number,
  pending: PromiseLike<unknown>,
  state: PostExecuteOutcome,
): Promise<PostExecuteOutcome> {
  for (let i = index; i < hooks.length; i++) {
    try {
      decide(call, state, await (i === index ? pending : hooks[i](call.exec, state.result)));
    } catch (error) {
      state.result = hookError(call, `threw: ${describeThrown(error).message}`);
    }
  }
  return state;
}

function decide(call: Call, state: PostExecuteOutcome, decision: unknown): void {
  if (decision === undefined || decision === null) return;
  const applied = apply(call, state.result, decision);
  state.result = applied.result;
  if (applied.valueReplaced) state.valueReplaced = true;
}

function apply(call: Call, result: ToolExecutionResult, decision: unknown): PostExecuteOutcome {
  const token = call.exec.token;
  let d: { kind: unknown; content: unknown; value: unknown; feedback: unknown; additionalContexts: unknown };
  let hasContent: boolean;
  let hasValue: boolean;
  try {
    if (typeof decision !== 'object' || decision === null) throw new TypeError('not an object');
    const raw = decision as Record<string, unknown>;
    d = { kind: raw.kind, content: raw.content, value: raw.value, feedback: raw.feedback, additionalContexts: raw.additionalContexts };
    hasContent = Object.hasOwn(raw, 'content') && d.content !== undefined;
    hasValue = Object.hasOwn(raw, 'value');
  } catch {
    return { result: hookError(call, "returned a decision that is not an object: return undefined, { kind: 'accept', content }, { kind: 'accept', value }, { kind: 'accept', additionalContexts } or { kind: 'block', feedback }"), valueReplaced: false };
  }
  let added: HookContext[] | undefined;
  if (d.additionalContexts !== undefined) {
    const read = readHookContexts(d.additionalContexts);
    if (typeof read === 'string') return { result: hookError(call, `attached invalid contexts: ${read}`), valueReplaced: false };
    if (read.length > 0) added = read;
  }
  if (d.kind === 'block') {
    const feedback = typeof d.feedback === 'string' && d.feedback !== '' ? d.feedback : 'blocked by policy';
    const blocked = failure('BLOCKED', feedback);
    return { result: bind(added === undefined ? blocked : failureWith(blocked.error, blocked.content, added), token), valueReplaced: false };
  }
  if (d.kind !== 'accept') {
    return { result: hookError(call, `returned a decision of unknown kind ${safeJson(d.kind)}: use 'accept' or 'block'`), valueReplaced: false };
  }
  if (hasContent && hasValue) {
    return { result: hookError(call, 'replaced both content and value: replace one (content for presentation, value for the canonical result)'), valueReplaced: false };
  }
  if (hasValue) {
    if (result.isError) {
      return { result: hookError(call, 'tried to replace the value of a failed result: a failure has no value; replace its content or leave it'), valueReplaced: false };
    }
    const projected = projectOutput(call.entry, call.exec.arguments, d.value, call.outer);
    // A replacement that fails its schema withholds this hook's contexts too.
    const next = added === undefined || projected.isError ? projected : success(projected.value, projected.content, projected.meta, added);
    return { result: bind(next, token), valueReplaced: true };
  }
  if (!hasContent && added === undefined) {
    // An empty list attached: nothing changes.
    if (d.additionalContexts !== undefined) return { result, valueReplaced: false };
    return { result: hookError(call, "returned { kind: 'accept' } without content, value or additionalContexts: return undefined to keep the result"), valueReplaced: false };
  }
  let content = result.content;
  if (hasContent) {
    const checked = checkContent(d.content, 'content');
    if (typeof checked === 'string') return { result: hookError(call, `replaced content with invalid content: ${checked}`), valueReplaced: false };
    content = checked;
  }
  const contexts = appendContexts(result.additionalContexts, added);
  const next = result.isError ? failureWith(result.error, content, contexts) : success(result.value, content, result.meta, contexts);
  return { result: bind(next, token), valueReplaced: false };
}

function appendContexts(before: HookContext[] | undefined, added: HookContext[] | undefined): HookContext[] | undefined {
  if (added === undefined) return before;
  if (before === undefined) return added;
  return Object.freeze([...before, ...added]) as HookContext[];
}

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return typeof x === 'object' && x !== null && typeof (x as { then?: unknown }).then === 'function';
}

function hookError(call: Call, what: string): ToolExecutionResult {
  return bind(
    failure('INVALID_TOOL_OUTPUT', `a tools/post-execute hook for tool "${call.exec.name}" ${what}`, 'PostExecuteHookError'),
    call.exec.token,
  );
}

function safeJson(x: unknown): string {
  try {
    return JSON.stringify(x) ?? String(x);
  } catch {
    return 'value';
  }
}
