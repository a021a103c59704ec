/**
 * Spill projection (opt-in, registry option `spill`): an outer successful
 * result whose text content is over the cap is stored whole in a
 * per-session folder, and its content becomes a head/tail preview plus a
 * notice naming the stored file. It runs after every post-execute hook, so
 * hooks see the full content. Skipped for nested calls (their content never
 * reaches the model), failures, results whose value a hook replaced, and
 * content with any non-text block. Any spill failure keeps the original.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ContentBlock } from './content.ts';
import { success } from './results.ts';
import type { ToolExecutionResult } from './tool.ts';

export interface SpillOptions {
  /**
   * Folder for spilled text; each lands at `<dir>/<sessionId>/<callId>.txt`
   * (created on demand; a session or call id outside `[A-Za-z0-9_-]{1,128}`
   * is not spilled).
   */
  dir: string;
  /**
   * How the notice names `dir` to the model, e.g. a workspace-relative path a
   * read tool accepts. Default: the absolute path of `dir`; a service should
   * set it so no host path reaches its clients.
   */
  shownAs?: string;
  /**
   * Cap, in UTF-8 bytes, on the text content of one outer result (text
   * blocks joined by a newline). Above it the text is spilled and the
   * preview (head, notice, tail) fits within the cap. Minimum 512.
   */
  maxInlineBytes: number;
  /**
   * Stores the spilled text somewhere other than a file under `dir` (a
   * service sharing a database keeps it in a table, so every replica has
   * it); `dir` and `shownAs` then only name it in the notice. A rejection
   * keeps the original result, as a failed file write does. Default: a file.
   */
  write?: (sessionId: string, callId: string, bytes: Uint8Array) => Promise<void>;
}

export const MIN_INLINE_BYTES = 512;

/** Session and call ids become path segments only when they are this safe. */
const SAFE_SEGMENT = /^[A-Za-z0-9_-]{1,128}$/;

/** Validates options; returns them with `dir` made absolute. */
export function resolveSpillOptions(options: SpillOptions): SpillOptions {
  if (typeof options?.dir !== 'string' || options.dir === '') {
    throw new TypeError('spill.dir must be a folder path, such as ".ptc/spill"');
  }
  const max = options.maxInlineBytes;
  if (!Number.isSafeInteger(max) || max < MIN_INLINE_BYTES) {
    throw new RangeError(`spill.maxInlineBytes must be an integer of at least ${MIN_INLINE_BYTES} (bytes)`);
  }
  if (options.shownAs !== undefined && typeof options.shownAs !== 'string') throw new TypeError('spill.shownAs must be a string, or omitted');
  if (options.write !== undefined && typeof options.write !== 'function') throw new TypeError('spill.write must be a function, or omitted');
  const resolved: SpillOptions = { dir: resolve(options.dir), maxInlineBytes: max, shownAs: options.shownAs ?? resolve(options.dir) };
  if (options.write !== undefined) resolved.write = options.write;
  return resolved;
}

/** The text of a text-only content, or undefined when any block is not text. */
function textOf(content: readonly ContentBlock[]): string | undefined {
  let text = '';
  for (let i = 0; i < content.length; i++) {
    const block = content[i];
    if (block.type !== 'text') return undefined;
    text += i === 0 ? block.text : `\n${block.text}`;
  }
  return text;
}

/**
 * Applies the projection to an outer result; returns it unchanged when a skip
 * rule applies, it fits, or anything fails. The caller checks outer/nested and
 * value replacement.
 */
export async function spillResult(
  options: SpillOptions,
  sessionId: string,
  callId: string,
  result: ToolExecutionResult,
): Promise<ToolExecutionResult> {
  if (result.isError) return result;
  const text = textOf(result.content);
  // Cheap pre-check: a string's UTF-8 size is at most 3 bytes per UTF-16 unit.
  if (text === undefined || text.length * 3 <= options.maxInlineBytes) return result;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= options.maxInlineBytes) return result;
  if (!SAFE_SEGMENT.test(sessionId) || !SAFE_SEGMENT.test(callId)) return result;
  const folder = join(options.dir, sessionId);
  const file = join(folder, `${callId}.txt`);
  const preview = buildPreview(bytes, options.maxInlineBytes, join(options.shownAs ?? options.dir, sessionId, `${callId}.txt`));
  if (preview === undefined) return result;
  try {
    if (options.write !== undefined) {
      await options.write(sessionId, callId, bytes);
    } else {
      await mkdir(folder, { recursive: true });
      await writeFile(file, bytes);
    }
  } catch {
    return result;
  }
  const content = Object.freeze([Object.freeze({ type: 'text', text: preview })]) as unknown as ContentBlock[];
  return success(result.value, content, result.meta, result.additionalContexts);
}

/** Head + notice + tail within `cap` bytes, cut on character boundaries; undefined if the notice alone does not fit. */
function buildPreview(bytes: Buffer, cap: number, file: string): string | undefined {
  const total = bytes.length;
  // Sized with `total` in place of the omitted count, which is never longer.
  const budget = cap - Buffer.byteLength(notice(total, total, file));
  if (budget < 0) return undefined;
  const headEnd = charBoundaryBefore(bytes, Math.ceil(budget / 2));
  const tailStart = charBoundaryAfter(bytes, total - (budget - headEnd));
  const omitted = tailStart - headEnd;
  return bytes.toString('utf8', 0, headEnd) + notice(omitted, total, file) + bytes.toString('utf8', tailStart, total);
}

function notice(omitted: number, total: number, file: string): string {
  return `\n\n[… ${omitted} bytes omitted: the full output (${total} bytes) is stored at ${file}; read that file for the rest …]\n\n`;
}

/** Largest index ≤ i that starts a UTF-8 character. */
function charBoundaryBefore(bytes: Buffer, i: number): number {
  while (i > 0 && i < bytes.length && (bytes[i] & 0xc0) === 0x80) i--;
  return i;
}
/** Smallest index ≥ i that starts a UTF-8 character. */
function charBoundaryAfter(bytes: Buffer, i: number): number {
  while (i < bytes.length && (bytes[i] & 0xc0) === 0x80) i++;
  return i;
}
