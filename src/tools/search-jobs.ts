/**
 * The work of grep and glob once their arguments are checked and their base
 * resolved: walk, filter, read, match. It runs in a search worker
 * (search-worker.ts), never on the host's event loop: a backtracking regex or
 * glob cannot be interrupted from inside, only by terminating the worker.
 * Jobs are plain data (they cross postMessage).
 */
import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { compileLinear } from './linear-regex.ts';
import { looksBinary, truncateLine } from './text-file.ts';
import { walkFiles } from './walk.ts';
import { WorkspaceError } from './workspace-error.ts';

export interface GrepMatch {
  path: string;
  lineNumber: number;
  line: string;
}

interface JobBase {
  /** The workspace's real root: symbolic links found by the walk must stay below it. */
  root: string;
  ignoreDirectories: string[];
  maxResults: number;
}

export interface GrepJob extends JobBase {
  kind: 'grep';
  /** A file or directory inside the workspace, already resolved. */
  base: { absolute: string; display: string; isDirectory: boolean };
  pattern: string;
  flags: string;
  glob?: string;
  maxGrepFileBytes: number;
  maxLineChars: number;
}

export interface GlobJob extends JobBase {
  kind: 'glob';
  /** The directory the walk starts at (the pattern's literal prefix). */
  start: { absolute: string; display: string };
  /** The literal prefix (with a trailing `/`, or empty), put back before matching. */
  prefix: string;
  pattern: string;
}

export type SearchJob = GrepJob | GlobJob;
export type SearchValue = { matches: GrepMatch[] } | { paths: string[] };

/** Never aborts: inside the worker, cancelling is terminating. */
const NEVER = new AbortController().signal;

export function runSearchJob(job: SearchJob): Promise<SearchValue> {
  return job.kind === 'grep' ? grep(job) : glob(job);
}

function compileGlob(name: string, pattern: string, options: picomatch.PicomatchOptions): (input: string) => boolean {
  try {
    return picomatch(pattern, options);
  } catch (error) {
    throw new WorkspaceError('invalid-argument', `${name} is not a valid glob (${(error as Error).message}): fix or escape it`);
  }
}

async function glob(job: GlobJob): Promise<{ paths: string[] }> {
  const matches = compileGlob('pattern', job.pattern, { dot: true });
  const paths: string[] = [];
  for await (const entry of walkFiles(job.start, { ignoreDirectories: new Set(job.ignoreDirectories), signal: NEVER })) {
    if (!matches(job.prefix + entry.relative)) continue;
    paths.push(entry.display);
    if (paths.length >= job.maxResults) break;
  }
  paths.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { paths };
}

async function grep(job: GrepJob): Promise<{ matches: GrepMatch[] }> {
  // RE2 where the pattern allows (linear time); V8's engine, under the worker's timeout, for the rest.
  const regex = compileLinear(job.pattern, job.flags.includes('i')) ?? new RegExp(job.pattern, job.flags);
  const filter = job.glob === undefined ? undefined : compileGlob('glob', job.glob, { dot: true, basename: true });
  const matches: GrepMatch[] = [];
  const search = async (absolute: string, display: string): Promise<boolean> => {
    const text = await readSearchable(absolute, job.maxGrepFileBytes);
    if (text === undefined) return true;
    // Line by line without split(): a file of short lines stays one string, not millions.
    let lineNumber = 0;
    for (let start = 0; start < text.length; ) {
      const newline = text.indexOf('\n', start);
      const end = newline === -1 ? text.length : newline;
      lineNumber++;
      const line = text.slice(start, end > start && text[end - 1] === '\r' ? end - 1 : end);
      start = end + 1;
      if (!regex.test(line)) continue;
      matches.push({ path: display, lineNumber, line: truncateLine(line, job.maxLineChars) });
      if (matches.length >= job.maxResults) return false;
    }
    return true;
  };

  if (!job.base.isDirectory) {
    await search(job.base.absolute, job.base.display);
    return { matches };
  }
  for await (const entry of walkFiles(job.base, { ignoreDirectories: new Set(job.ignoreDirectories), signal: NEVER })) {
    if (filter !== undefined && !filter(entry.relative)) continue;
    let absolute = entry.absolute;
    if (entry.isSymbolicLink) {
      const real = await realpath(entry.absolute).catch(() => undefined);
      if (real === undefined || !inside(job.root, real)) continue;
      absolute = real;
    }
    if (!(await search(absolute, entry.display))) break;
  }
  return { matches };
}

function inside(root: string, real: string): boolean {
  const rel = path.relative(root, real);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * The file's text, or undefined when it is not a regular file, too large,
 * binary or unreadable. Opened with O_NONBLOCK and checked with fstat, so a
 * FIFO (met directly or through a link) never blocks a thread in open().
 */
async function readSearchable(absolute: string, maxBytes: number): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(absolute, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > maxBytes) return undefined;
    const bytes = await handle.readFile();
    if (bytes.length > maxBytes || looksBinary(bytes)) return undefined;
    return bytes.toString('utf8');
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
  }
}
