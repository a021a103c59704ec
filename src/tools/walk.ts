/**
 * The directory walk under glob and grep: depth-first, entries in name
 * order, never following symbolic links (no cycles, no escapes), skipping
 * ignored directory names and special files (FIFOs, sockets, devices), and
 * checking the signal before every entry.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fsFailure } from './workspace-error.ts';

export interface WalkEntry {
  /** Real location (the walk never follows links, so parents are real). */
  absolute: string;
  /** Workspace-relative, `/`-separated. */
  display: string;
  /** Relative to the walk's start directory, `/`-separated. */
  relative: string;
  /** The entry is itself a symbolic link (not followed; callers decide). */
  isSymbolicLink: boolean;
}

export interface WalkOptions {
  ignoreDirectories: ReadonlySet<string>;
  signal: AbortSignal;
}

/** Yields every regular file and symbolic link below `start` (a real directory path). */
export async function* walkFiles(
  start: { absolute: string; display: string },
  { ignoreDirectories, signal }: WalkOptions,
): AsyncGenerator<WalkEntry> {
  const stack: { absolute: string; relative: string }[] = [{ absolute: start.absolute, relative: '' }];
  const prefix = start.display === '.' ? '' : `${start.display}/`;
  while (stack.length > 0) {
    signal.throwIfAborted();
    const dir = stack.pop()!;
    let entries;
    try {
      entries = await readdir(dir.absolute, { withFileTypes: true });
    } catch (error) {
      // An unreadable directory below the start is skipped, as find and rg do.
      if (dir.relative === '') throw fsFailure(error, start.display, 'list');
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: { absolute: string; relative: string }[] = [];
    for (const entry of entries) {
      signal.throwIfAborted();
      const relative = dir.relative === '' ? entry.name : `${dir.relative}/${entry.name}`;
      const absolute = path.join(dir.absolute, entry.name);
      if (entry.isDirectory()) {
        if (!ignoreDirectories.has(entry.name)) subdirs.push({ absolute, relative });
        continue;
      }
      // FIFOs, sockets and devices are not listed: no tool may open them.
      if (!entry.isFile() && !entry.isSymbolicLink()) continue;
      yield { absolute, display: prefix + relative, relative, isSymbolicLink: entry.isSymbolicLink() };
    }
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]);
  }
}
