/**
 * The rules on a tool definition's shape (everything but its schemas), in one
 * place: `defineTool` and `register` both apply them, so a definition that
 * `defineTool` accepts is never refused by `register` for its shape.
 */

/** Longest `timeoutMs` a definition may set, ms (the Node timer maximum, ~24.8 days). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** Every shape problem of `input`, one line each; empty when the shape is right. */
export function definitionShapeProblems(input: unknown): string[] {
  if (typeof input !== 'object' || input === null) return ['a tool definition must be one object: { name, description, parameters, output, execute }'];
  const d = input as { [key: string]: unknown; output?: unknown };
  const problems: string[] = [];
  if (typeof d.name !== 'string' || d.name === '') problems.push('name: must be a non-empty string');
  if (typeof d.description !== 'string') problems.push('description: must be a string (the model reads it)');
  const output = d.output as { [key: string]: unknown } | null | undefined;
  if (typeof output !== 'object' || output === null) {
    problems.push('output: is missing: declare output: { schema, render(args, value) } (every tool returns a declared value)');
  } else {
    if (typeof output.render !== 'function') problems.push('output.render: must be a function (args, value) => ContentBlock[]');
    if (output.presentationMeta !== undefined && typeof output.presentationMeta !== 'function') {
      problems.push('output.presentationMeta: must be a function (args, value) => JSON, or left out');
    }
  }
  if (typeof d.execute !== 'function') problems.push('execute: must be an async function (args, exec) => value');
  if (d.isConcurrencySafe !== undefined && typeof d.isConcurrencySafe !== 'function') {
    problems.push('isConcurrencySafe: must be a function (args) => boolean, or left out');
  }
  const timeoutMs = d.timeoutMs;
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && Number.isInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS)) {
    problems.push(`timeoutMs: must be a positive whole number of milliseconds up to ${MAX_TIMEOUT_MS}, or left out`);
  }
  if (d.needsApproval !== undefined && typeof d.needsApproval !== 'boolean' && typeof d.needsApproval !== 'function') {
    problems.push('needsApproval: must be a boolean or a function (args, call) => boolean | Promise<boolean>, or left out');
  }
  if (d.replay !== undefined && d.replay !== 'reexecute') problems.push("replay: must be 'reexecute', or left out (answered from the journal)");
  if (d.revert !== undefined && typeof d.revert !== 'function') problems.push('revert: must be a function (args, value, call) => void | Promise<void>, or left out');
  return problems;
}
