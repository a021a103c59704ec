/**
 * Text-file helpers shared by the tools: binary detection, whole-file reads
 * for write/edit (bounded, strict UTF-8), and long-line truncation.
 */
import { readFile, stat } from 'node:fs/promises';
import { WorkspaceError, fsFailure } from './workspace-error.ts';

/** Bytes inspected for a NUL byte, as git does. */
export const BINARY_SNIFF_BYTES = 8000;

/** A file is binary when a NUL byte occurs in its first 8,000 bytes (git's rule). */
export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  return false;
}

export function binaryFileError(display: string): WorkspaceError {
  return new WorkspaceError('binary-file', `"${display}" is a binary file, not shown: only text files can be read or edited`);
}

/** Cuts `text` to `maxChars` characters plus a marker naming the full length. */
export function truncateLine(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : truncatedMarker(text.slice(0, maxChars), text.length);
}

/** A marker for a line whose full length is known but whose text was not all kept. */
export function truncatedMarker(kept: string, fullLength: number): string {
  return `${kept}… [line truncated: ${fullLength} characters]`;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Reads a whole text file for write/edit: refuses files over `maxBytes`,
 * binary files and invalid UTF-8 (rewriting those would corrupt them). A
 * BOM is kept so that an edit round-trips byte for byte.
 */
export async function readTextFile(absolute: string, display: string, maxBytes: number, signal: AbortSignal): Promise<string> {
  let bytes: Buffer;
  try {
    const info = await stat(absolute);
    if (!info.isFile()) throw new WorkspaceError('not-a-file', `"${display}" is not a regular file: pass a file path`);
    if (info.size > maxBytes) throw tooLarge(display, info.size, maxBytes);
    bytes = await readFile(absolute, { signal });
  } catch (error) {
    throw fsFailure(error, display, 'read');
  }
  if (bytes.length > maxBytes) throw tooLarge(display, bytes.length, maxBytes);
  if (looksBinary(bytes)) throw binaryFileError(display);
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new WorkspaceError('binary-file', `"${display}" is not valid UTF-8 text: it cannot be edited as text`);
  }
}

export function tooLarge(display: string, size: number, maxBytes: number): WorkspaceError {
  return new WorkspaceError(
    'too-large',
    `"${display}" is ${size} bytes, over the ${maxBytes}-byte limit for write and edit: change it in smaller files or with another tool`,
  );
}

/** Number of lines as read counts them: a final newline does not start a new line. */
export function countLines(text: string): number {
  if (text === '') return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n - 1 : n;
}
