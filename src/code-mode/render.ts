/**
 * What run_code shows the model: its logs and result on success, and the
 * CODE_RUN_FAILED message on failure.
 */
import type { ContentBlock } from '../content.ts';
import type { FrozenJson, JsonValue } from '../json.ts';
import type { SandboxFailure } from '../sandbox-runtime.ts';
import type { TypecheckDiagnostic } from './typings-service.ts';
import { codeFrame } from './code-frame.ts';
import { boundedPrettyJson, cutToBytes } from './pretty-json.ts';

export interface RunCodeValue {
  logs: readonly string[];
  result?: FrozenJson<JsonValue>;
  /** The run paused for approval (a `PausedValue`). */
  paused?: FrozenJson<JsonValue>;
}

/**
 * Logs, then the result (strings raw, other JSON pretty-printed); or a note
 * that there was no output. The result's text stops at `maxRenderedBytes`
 * (UTF-8) and ends with a marker; the value itself is never cut.
 */
export function renderRunCode(value: RunCodeValue, maxRenderedBytes = Number.POSITIVE_INFINITY): ContentBlock[] {
  const parts = [...value.logs];
  if (value.paused !== undefined) parts.push(renderPaused(value.paused));
  if (value.result !== undefined) parts.push(renderResult(value.result, maxRenderedBytes));
  return [{ type: 'text', text: parts.length === 0 ? '(run_code completed with no output)' : parts.join('\n') }];
}

function renderResult(result: FrozenJson<JsonValue>, maxBytes: number): string {
  if (typeof result === 'string') {
    const cut = cutToBytes(result, maxBytes);
    return cut.length === result.length ? result : cut + truncationMarker(maxBytes, `a string of ${Buffer.byteLength(result)} bytes`);
  }
  if (maxBytes === Number.POSITIVE_INFINITY) return JSON.stringify(result, null, 2);
  const { text, truncated } = boundedPrettyJson(result, maxBytes);
  return truncated ? text + truncationMarker(maxBytes, 'its pretty-printed JSON is longer') : text;
}

function renderPaused(paused: FrozenJson<JsonValue>): string {
  const { pending } = paused as unknown as { pending: readonly { seq: number; toolName: string }[] };
  const calls = pending.map((call) => `call #${call.seq} (tools.${call.toolName})`).join(', ');
  return `[the run is paused: ${calls} waits for a person's approval. It goes on by itself once they decide; a denial throws ToolCallError APPROVAL_DENIED at that call.]`;
}

function truncationMarker(maxBytes: number, what: string): string {
  return `\n[result text truncated at ${maxBytes} bytes (${what}); the returned value itself is complete: return less, or a summary, to see it all here]`;
}

/** `code run failed (<kind>): <message>`, the model's frames, a code frame, then the logs. */
export function describeFailure(failure: SandboxFailure, code: string, logs: readonly string[]): string {
  const lines = [`code run failed (${failure.kind}): ${failure.message}`];
  for (const frame of failure.frames ?? []) lines.push(`    ${frame}`);
  if (failure.line !== undefined) {
    const frame = codeFrame(code, failure.line, failure.column);
    if (frame !== '') lines.push('', frame);
  }
  return withLogs(lines, logs);
}

/** A cancelled run: what stopped, then the logs it wrote before (as a failed run keeps its logs). */
export function describeCancellation(nestedCalls: number, logs: readonly string[]): string {
  return withLogs([`run_code was cancelled; its ${nestedCalls} nested call(s) have stopped`], logs);
}

/** The `typecheck` failure: every diagnostic at line:col with its code frame. */
export function describeTypecheckFailure(diagnostics: readonly TypecheckDiagnostic[], code: string, filename: string): string {
  const count = diagnostics.length === 1 ? '1 type error' : `${diagnostics.length} type errors`;
  const lines = [`code run failed (typecheck): ${count}; nothing ran. Fix the program to match the tool typings and run it again.`];
  for (const d of diagnostics) {
    lines.push('', describeDiagnostic(d, filename));
    const frame = codeFrame(code, d.line, d.column);
    if (frame !== '') lines.push(frame);
  }
  return lines.join('\n');
}

/** One line per diagnostic, as prepended to the logs when type-checking only warns. */
export function describeDiagnostic(d: TypecheckDiagnostic, filename: string): string {
  return `${filename}:${d.line}:${d.column} - error TS${d.code}: ${d.message}`;
}

function withLogs(lines: string[], logs: readonly string[]): string {
  if (logs.length > 0) lines.push('', 'logs:', ...logs);
  return lines.join('\n');
}
