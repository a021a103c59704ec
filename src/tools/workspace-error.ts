/**
 * The one error class of the workspace tools. The registry turns any throw
 * from a tool body into a `TOOL_FAILED` result carrying the message; `reason`
 * lets library callers and tests tell the refusals apart without parsing text.
 * Messages name only the model's own path or workspace-relative paths, never
 * the host location of the workspace.
 */
import type { Stats } from 'node:fs';

export type WorkspaceErrorReason =
  /** `..`, an absolute path elsewhere, or a symbolic link leading out. */
  | 'outside-workspace'
  | 'not-found'
  /** A directory where a file was expected, or a FIFO, socket or device. */
  | 'not-a-file'
  | 'not-a-directory'
  /** A NUL byte in the first 8,000 bytes, or (for write/edit) not valid UTF-8. */
  | 'binary-file'
  | 'too-large'
  /** write and edit: the change would leave the workspace's disk with less free space than it keeps. */
  | 'no-space'
  /** edit: `old_string` does not occur. */
  | 'no-match'
  /** edit: `old_string` occurs more than once and `replace_all` is not set. */
  | 'ambiguous-match'
  | 'invalid-argument'
  | 'io-error';

export class WorkspaceError extends Error {
  override name = 'WorkspaceError';
  readonly reason: WorkspaceErrorReason;
  constructor(reason: WorkspaceErrorReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * Rewrites a Node fs error (whose message holds the absolute host path) as a
 * WorkspaceError naming the workspace-relative path. Abort errors pass
 * through untouched so the registry reports them as aborts.
 */
export function fsFailure(error: unknown, displayPath: string, action: string): Error {
  if (error instanceof WorkspaceError) return error;
  if (error instanceof Error && error.name === 'AbortError') return error;
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ENOENT':
      return new WorkspaceError('not-found', `"${displayPath}" does not exist: check the path (glob can list files)`);
    case 'EISDIR':
      return new WorkspaceError('not-a-file', `"${displayPath}" is a directory, not a file: pass a file path (glob lists files)`);
    case 'ENOTDIR':
      return new WorkspaceError('not-a-directory', `a parent of "${displayPath}" is a file, not a directory: check the path`);
    case 'EACCES':
    case 'EPERM':
      return new WorkspaceError('io-error', `permission denied to ${action} "${displayPath}"`);
    default:
      return new WorkspaceError('io-error', `could not ${action} "${displayPath}"${typeof code === 'string' ? ` (${code})` : ''}`);
  }
}

/** What a non-regular, non-directory entry is, in words. */
function specialKind(info: Stats): string {
  if (info.isFIFO()) return 'a named pipe (FIFO)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isSymbolicLink()) return 'a symbolic link';
  return 'a special file';
}

/**
 * The refusal for anything but a regular file or a directory, decided before
 * the entry is opened: opening a FIFO blocks until a writer appears, which
 * would hold a host thread for as long as nobody writes.
 */
export function specialFileError(display: string, info: Stats): WorkspaceError {
  return new WorkspaceError(
    'not-a-file',
    `"${display}" is ${specialKind(info)}, not a regular file: the workspace tools only use regular files and directories`,
  );
}
