/**
 * Text-file helpers shared by the tools: binary detection, whole-file reads
 * for write/edit (bounded, strict UTF-8), and long-line truncation.
 */
import { constants } from 'node:fs';
import type { StatsFs } from 'node:fs';
import { type FileHandle, open, statfs } from 'node:fs/promises';
import { WorkspaceError, fsFailure, specialFileError } from './workspace-error.ts';

/**
 * Open flags for reading a file that was checked to be regular. O_NONBLOCK
 * covers the race where it is swapped for a FIFO after the check: open()
 * then returns at once instead of blocking a host thread until a writer
 * comes; the fstat right after refuses it. On a regular file it changes
 * nothing.
 */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;
/** Same for writing; no O_TRUNC, so nothing is cut before the fstat has passed. */
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK;

/** Opens `absolute` (read or write) and refuses it unless it is a regular file; closes it on refusal. */
export async function openRegularFile(absolute: string, display: string, mode: 'read' | 'write'): Promise<FileHandle> {
  const handle = await open(absolute, mode === 'read' ? READ_FLAGS : WRITE_FLAGS, 0o666);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw info.isDirectory() ? new WorkspaceError('not-a-file', `"${display}" is a directory, not a file: pass a file path`) : specialFileError(display, info);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

/** Replaces the whole content of a regular file (created when missing); refuses anything else. */
export async function writeTextFile(absolute: string, display: string, content: string, signal: AbortSignal): Promise<void> {
  try {
    signal.throwIfAborted();
    const handle = await openRegularFile(absolute, display, 'write');
    try {
      await handle.truncate(0);
      await handle.writeFile(content, { encoding: 'utf8', signal });
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw fsFailure(error, display, 'write');
  }
}

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
    const handle = await openRegularFile(absolute, display, 'read');
    try {
      const { size } = await handle.stat();
      if (size > maxBytes) throw tooLarge(display, size, maxBytes);
      bytes = await handle.readFile({ signal });
    } finally {
      await handle.close();
    }
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

/** Fewest free inodes a change leaves the workspace's disk, where its filesystem counts them (1 % of them when fewer). */
const MIN_FREE_INODES = 10_000;

/**
 * Refuses to write `bytes` when the workspace's disk would keep less than `minFreeMiB` free, or
 * has almost no free inodes (each new file and folder takes one). A filesystem that cannot say is
 * not refused.
 */
export async function assertDiskRoom(root: string, display: string, bytes: number, minFreeMiB: number): Promise<void> {
  if (minFreeMiB === 0) return;
  let disk: StatsFs;
  try {
    disk = await statfs(root);
  } catch {
    return;
  }
  const shortage = diskShortage(disk, bytes, minFreeMiB);
  if (shortage !== undefined) {
    throw new WorkspaceError(
      'no-space',
      `writing "${display}" (${bytes} bytes) would leave the workspace's disk with ${shortage}: the disk is nearly full; write less, or have the workspace's operator free space`,
    );
  }
}

/** What a change of `bytes` would leave the disk short of, worded for the error; undefined when it fits. */
export function diskShortage(disk: Pick<StatsFs, 'bavail' | 'bsize' | 'files' | 'ffree'>, bytes: number, minFreeMiB: number): string | undefined {
  if (disk.bavail * disk.bsize - bytes < minFreeMiB * 1024 * 1024) return `less free space than the ${minFreeMiB} MiB it keeps`;
  if (disk.files > 0 && disk.ffree < Math.min(MIN_FREE_INODES, disk.files / 100)) return `almost no free inodes (${disk.ffree} left; each new file or folder takes one)`;
  return undefined;
}

/** Number of lines as read counts them: a final newline does not start a new line. */
export function countLines(text: string): number {
  if (text === '') return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n - 1 : n;
}
