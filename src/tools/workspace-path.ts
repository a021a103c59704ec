/**
 * Safe path resolution: every path a tool touches stays inside the workspace.
 *
 * Rules, each with its own message: no absolute path (one message for all,
 * inside or outside, so the host location cannot be probed), no `..` that
 * climbs above the root (even to come back), no symbolic link (anywhere on
 * the path) whose target leads outside, and nothing but regular files and
 * directories (a FIFO, socket or device could block the host in open()). Existing paths are checked by their real path; a path about to be
 * created is checked through the real path of its deepest existing ancestor.
 * A check and the later fs call are not atomic: a process racing to swap a
 * directory for a symlink in between is outside this threat model.
 */
import type { Stats } from 'node:fs';
import { lstat, realpath } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { WorkspaceError, fsFailure, specialFileError } from './workspace-error.ts';

export interface ResolvedPath {
  /** Where to do the fs call: the real path (existing) or real ancestor + rest (new). Never shown. */
  absolute: string;
  /** Workspace-relative, `/`-separated, as the model named it; `.` for the root. */
  display: string;
}

export interface Workspace {
  /** The workspace's real path. Never shown to a model. */
  readonly root: string;
  /** An existing file or directory; refuses escapes, throws `not-found` when missing. */
  resolveExisting(input: string): Promise<ResolvedPath & { isDirectory: boolean }>;
  /** A file to create or overwrite; its missing parents may be created under `absolute`. */
  resolveForWrite(input: string): Promise<ResolvedPath & { exists: boolean }>;
  /** Workspace-relative display form of a real path already known to be inside. */
  displayOf(absolute: string): string;
  /** True when a real (symlink-free) path is the root or below it. */
  contains(realAbsolute: string): boolean;
}

/** Opens a workspace rooted at `dir` (realpath'd once, now). Throws when it does not exist. */
export function openWorkspace(dir: string): Workspace {
  let root: string;
  try {
    root = realpathSync(dir);
  } catch {
    throw new Error(`workspace directory ${JSON.stringify(dir)} does not exist: create it or pass another workspace`);
  }
  const contains = (p: string): boolean => {
    const rel = path.relative(root, p);
    return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
  };
  const displayOf = (p: string): string => {
    const rel = path.relative(root, p);
    return rel === '' ? '.' : rel.split(path.sep).join('/');
  };

  /** The lexical absolute path, refused if it leaves the root without any symlink help. */
  const lexical = (input: string): { lexicalPath: string; display: string } => {
    if (typeof input !== 'string' || input === '') {
      throw new WorkspaceError('invalid-argument', 'the path is empty: pass a path relative to the workspace root, such as "src/index.ts"');
    }
    if (input.includes('\0')) throw new WorkspaceError('invalid-argument', 'the path contains a NUL character: pass a plain path');
    // Every absolute path gets the same answer, inside the workspace or not:
    // accepting the inside ones would let a program confirm where the
    // workspace lives on the host by trying candidates.
    if (path.isAbsolute(input)) {
      throw new WorkspaceError('outside-workspace', `"${input}" is an absolute path: pass a path relative to the workspace root, such as "src/index.ts"`);
    }
    // Likewise a path that climbs above the root and comes back ("../ws/x")
    // would confirm the root's own name: any climb above the root is refused.
    let depth = 0;
    for (const segment of input.split(path.sep === '/' ? '/' : /[\\/]/)) {
      if (segment === '..') depth--;
      else if (segment !== '.' && segment !== '') depth++;
      if (depth < 0) {
        throw new WorkspaceError(
          'outside-workspace',
          `"${input}" leaves the workspace through "..": pass a path inside the workspace, relative to its root`,
        );
      }
    }
    const lexicalPath = path.resolve(root, input);
    return { lexicalPath, display: displayOf(lexicalPath) };
  };

  const throughSymlink = (input: string): WorkspaceError =>
    new WorkspaceError(
      'outside-workspace',
      `"${input}" goes through a symbolic link that leads outside the workspace: only links that stay inside the workspace can be followed`,
    );

  return {
    root,
    contains,
    displayOf,
    async resolveExisting(input) {
      const { lexicalPath, display } = lexical(input);
      let real: string;
      try {
        real = await realpath(lexicalPath);
      } catch (error) {
        throw fsFailure(error, display, 'resolve');
      }
      if (!contains(real)) throw throughSymlink(input);
      let info: Stats;
      try {
        info = await lstat(real);
      } catch (error) {
        throw fsFailure(error, display, 'stat');
      }
      if (!info.isFile() && !info.isDirectory()) throw specialFileError(display, info);
      return { absolute: real, display, isDirectory: info.isDirectory() };
    },
    async resolveForWrite(input) {
      const { lexicalPath, display } = lexical(input);
      // Deepest entry that exists as an entry (lstat), so a dangling link is found, not skipped.
      let existing = lexicalPath;
      const rest: string[] = [];
      for (;;) {
        try {
          await lstat(existing);
          break;
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          if (code !== 'ENOENT') throw fsFailure(error, display, 'resolve');
          rest.unshift(path.basename(existing));
          existing = path.dirname(existing);
        }
      }
      let real: string;
      try {
        real = await realpath(existing);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code === 'ENOENT' || code === 'ELOOP') {
          throw new WorkspaceError(
            'outside-workspace',
            `"${input}" goes through a symbolic link whose target does not exist: write to a real path inside the workspace`,
          );
        }
        throw fsFailure(error, display, 'resolve');
      }
      if (!contains(real)) throw throughSymlink(input);
      const exists = rest.length === 0;
      if (exists) {
        const info = await lstat(real);
        if (info.isDirectory()) throw new WorkspaceError('not-a-file', `"${display}" is a directory, not a file: pass a file path`);
        if (!info.isFile()) throw specialFileError(display, info);
      }
      return { absolute: path.join(real, ...rest), display, exists };
    },
  };
}
