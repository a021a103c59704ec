/**
 * The output declaration applied to a value (docs/architecture.md, "Tools and the dispatch pipeline", step 7): snapshot → validate
 * against `output.schema` → deep-freeze → `render` → `presentationMeta`
 * (outer calls only). Any failure is one `ToolOutputError` result.
 */
import type { ContentBlock } from './content.ts';
import { deepFreeze, LossyJsonError, snapshotFrozenJson, snapshotJson, type JsonValue } from './json.ts';
import { describeThrown, outputFailure, success } from './results.ts';
import type { ToolExecutionResult, ToolOutput } from './tool.ts';

/** What projection needs of a registered tool. */
export interface OutputDeclaration {
  readonly name: string;
  readonly output: ToolOutput<unknown, unknown>;
  validateValue(value: JsonValue): string[];
}

/** Projects `raw` through the tool's output declaration. The result is frozen, not yet bound. */
export function projectOutput(
  tool: OutputDeclaration,
  args: unknown,
  raw: unknown,
  outer: boolean,
): ToolExecutionResult {
  let value: JsonValue;
  try {
    // Copy and freeze in one walk: validation only reads, so it can run on the frozen copy.
    value = snapshotFrozenJson(raw, 'value') as JsonValue;
  } catch (error) {
    return outputFailure(`tool "${tool.name}" returned a value that is not lossless JSON: ${lossyDetail(error)}`);
  }
  const violations = tool.validateValue(value);
  if (violations.length > 0) {
    return outputFailure(
      `tool "${tool.name}" returned a value that does not match its output schema: ${violations.join('; ')}`,
    );
  }
  const content = renderContent(tool, args, value);
  if (typeof content === 'string') return outputFailure(content);
  let meta: JsonValue | undefined;
  if (outer && tool.output.presentationMeta !== undefined) {
    const projected = projectMeta(tool, args, value);
    if (typeof projected === 'string') return outputFailure(projected);
    meta = projected.meta;
  }
  return success(value, content, meta);
}

/** Renders `value`; returns the frozen content or a message saying what was wrong. */
export function renderContent(tool: OutputDeclaration, args: unknown, value: JsonValue): ContentBlock[] | string {
  let raw: unknown;
  try {
    raw = tool.output.render(args, value);
  } catch (error) {
    return `render of tool "${tool.name}" threw: ${describeThrown(error).message}`;
  }
  const checked = checkContent(raw, 'content');
  if (typeof checked === 'string') return `render of tool "${tool.name}" returned invalid content: ${checked}`;
  return checked;
}

function projectMeta(tool: OutputDeclaration, args: unknown, value: JsonValue): { meta: JsonValue | undefined } | string {
  let raw: unknown;
  try {
    raw = tool.output.presentationMeta!(args, value);
  } catch (error) {
    return `presentationMeta of tool "${tool.name}" threw: ${describeThrown(error).message}`;
  }
  // `undefined` means "no card data for this call".
  if (raw === undefined) return { meta: undefined };
  try {
    return { meta: deepFreeze(snapshotJson(raw, 'meta')) as JsonValue };
  } catch (error) {
    return `presentationMeta of tool "${tool.name}" returned data that is not lossless JSON: ${lossyDetail(error)}`;
  }
}

/**
 * Checks that `raw` is an array of MCP-shaped content blocks; returns a
 * frozen snapshot, or a message naming the first problem.
 */
export function checkContent(raw: unknown, root: string): ContentBlock[] | string {
  return copyTextContent(raw) ?? checkAnyContent(raw, root);
}

/**
 * The common case, without the generic walker: a plain array of plain
 * `{ type: 'text', text }` blocks. Like JSON, the copy ignores symbol and
 * non-enumerable keys; a block with any other enumerable key (or anything
 * that throws) returns undefined and takes the generic path.
 */
function copyTextContent(raw: unknown): ContentBlock[] | undefined {
  try {
    if (!Array.isArray(raw) || Object.getPrototypeOf(raw) !== Array.prototype) return undefined;
    const length = raw.length;
    const out = new Array<ContentBlock>(length);
    for (let i = 0; i < length; i++) {
      const block: unknown = raw[i];
      if (typeof block !== 'object' || block === null || Object.getPrototypeOf(block) !== Object.prototype) return undefined;
      let keys = 0;
      for (const key in block) {
        if (key !== 'type' && key !== 'text') return undefined;
        keys++;
      }
      if (keys !== 2) return undefined;
      const { type, text } = block as { type?: unknown; text?: unknown };
      if (type !== 'text' || typeof text !== 'string') return undefined;
      out[i] = Object.freeze({ type: 'text', text });
    }
    return Object.freeze(out) as ContentBlock[];
  } catch {
    return undefined;
  }
}

function checkAnyContent(raw: unknown, root: string): ContentBlock[] | string {
  let snap: JsonValue;
  try {
    snap = snapshotJson(raw, root);
  } catch (error) {
    return lossyDetail(error);
  }
  if (!Array.isArray(snap)) return `${root}: must be an array of content blocks such as [{ type: 'text', text }]`;
  for (let i = 0; i < snap.length; i++) {
    const problem = blockProblem(snap[i]);
    if (problem !== undefined) return `${root}[${i}]: ${problem}`;
  }
  return deepFreeze(snap) as unknown as ContentBlock[];
}

function blockProblem(block: JsonValue): string | undefined {
  if (typeof block !== 'object' || block === null || Array.isArray(block)) return 'must be a content block object';
  const b = block as Record<string, JsonValue | undefined>;
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? undefined : 'a text block needs a string `text`';
    case 'image':
    case 'audio':
      return typeof b.data === 'string' && typeof b.mimeType === 'string'
        ? undefined
        : `an ${b.type} block needs string \`data\` (base64) and \`mimeType\``;
    case 'resource': {
      const r = b.resource;
      if (typeof r !== 'object' || r === null || Array.isArray(r) || typeof r.uri !== 'string') {
        return 'a resource block needs `resource` with a string `uri`';
      }
      return typeof r.text === 'string' || typeof r.blob === 'string'
        ? undefined
        : 'a resource block needs `resource.text` or `resource.blob`';
    }
    case 'resource_link':
      return typeof b.uri === 'string' && typeof b.name === 'string'
        ? undefined
        : 'a resource_link block needs string `uri` and `name`';
    default:
      return "`type` must be one of 'text', 'image', 'audio', 'resource', 'resource_link'";
  }
}

function lossyDetail(error: unknown): string {
  if (error instanceof LossyJsonError) return `${error.violation.path}: ${error.violation.message}`;
  return describeThrown(error).message;
}
