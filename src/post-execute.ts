/**
 * Post-execute (`tools/post-execute`): hooks run in registration order, each
 * seeing the result the previous one left. Decisions: replace `content`
 * (presentation only), replace `value` (re-projected), or `block`. A hook
 * that throws or returns a malformed decision withholds the result (fail
 * closed): the call becomes an `INVALID_TOOL_OUTPUT` failure naming the hook.
 */
import type { Call } from './around-dispatch.ts';
import { checkContent, projectOutput } from './project-output.ts';
import { bind, describeThrown, failure, failureWith, success } from './results.ts';
import type { PostExecuteHook, ToolExecutionResult } from './tool.ts';

export interface PostExecuteOutcome {
  result: ToolExecutionResult;
  /** A hook replaced the value (spill projection skips such results). */
  valueReplaced: boolean;
}

export async function runPostExecute(
  call: Call,
  hooks: readonly PostExecuteHook[],
  initial: ToolExecutionResult,
): Promise<PostExecuteOutcome> {
  let result = initial;
  let valueReplaced = false;
  for (const hook of hooks) {
    let decision: unknown;
    try {
      decision = await hook(call.exec, result);
    } catch (error) {
      result = hookError(call, `threw: ${describeThrown(error).message}`);
      continue;
    }
    if (decision === undefined || decision === null) continue;
    const applied = apply(call, result, decision);
    result = applied.result;
    if (applied.valueReplaced) valueReplaced = true;
  }
  return { result, valueReplaced };
}

function apply(call: Call, result: ToolExecutionResult, decision: unknown): PostExecuteOutcome {
  const token = call.exec.token;
  let d: { kind: unknown; content: unknown; value: unknown; feedback: unknown };
  let hasContent: boolean;
  let hasValue: boolean;
  try {
    if (typeof decision !== 'object' || decision === null) throw new TypeError('not an object');
    const raw = decision as Record<string, unknown>;
    d = { kind: raw.kind, content: raw.content, value: raw.value, feedback: raw.feedback };
    hasContent = Object.hasOwn(raw, 'content') && d.content !== undefined;
    hasValue = Object.hasOwn(raw, 'value');
  } catch {
    return { result: hookError(call, "returned a decision that is not an object: return undefined, { kind: 'accept', content }, { kind: 'accept', value } or { kind: 'block', feedback }"), valueReplaced: false };
  }
  if (d.kind === 'block') {
    const feedback = typeof d.feedback === 'string' && d.feedback !== '' ? d.feedback : 'blocked by policy';
    return { result: bind(failure('BLOCKED', feedback), token), valueReplaced: false };
  }
  if (d.kind !== 'accept') {
    return { result: hookError(call, `returned a decision of unknown kind ${safeJson(d.kind)}: use 'accept' or 'block'`), valueReplaced: false };
  }
  if (hasContent && hasValue) {
    return { result: hookError(call, 'replaced both content and value: replace one (content for presentation, value for the canonical result)'), valueReplaced: false };
  }
  if (hasContent) {
    const content = checkContent(d.content, 'content');
    if (typeof content === 'string') return { result: hookError(call, `replaced content with invalid content: ${content}`), valueReplaced: false };
    const next = result.isError
      ? failureWith(result.error, content, result.additionalContexts)
      : success(result.value, content, result.meta, result.additionalContexts);
    return { result: bind(next, token), valueReplaced: false };
  }
  if (hasValue) {
    if (result.isError) {
      return { result: hookError(call, 'tried to replace the value of a failed result: a failure has no value; replace its content or leave it'), valueReplaced: false };
    }
    return { result: bind(projectOutput(call.entry, call.exec.arguments, d.value, call.outer), token), valueReplaced: true };
  }
  return { result: hookError(call, "returned { kind: 'accept' } without content or value: return undefined to keep the result"), valueReplaced: false };
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
