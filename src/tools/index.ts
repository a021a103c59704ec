/**
 * The built-in workspace tools: read, write, edit, glob, grep, all rooted at
 * one workspace directory. Values are the canonical DTOs:
 *
 * - read  → `{ path, offset, lines: [{ number, text }], totalLines }`
 * - write → `{ path, operation: 'create' | 'update', before: string | null, after }`
 * - edit  → `{ path, before, after }`
 * - glob  → `{ paths }`
 * - grep  → `{ matches: [{ path, lineNumber, line }] }`
 *
 * Paths in values and messages are workspace-relative (`/`-separated); the
 * host location of the workspace is never shown. Rules (workspace-path.ts):
 * no `..` climbing above the root, no absolute path, no symbolic link leading out.
 * Binary files (a NUL in the first 8,000 bytes) are refused by read/write/
 * edit and skipped by grep. read/glob/grep are concurrency-safe; write/edit
 * are exclusive. write/edit declare `presentationMeta` = the applied diff
 * hunks (diff-hunks.ts), computed by the registry for outer calls only.
 * Failures are thrown `WorkspaceError`s (with a `reason`), which the registry
 * reports as `TOOL_FAILED` carrying the message. Caps: see limits.ts.
 * Hostile input is expected: absolute paths are refused with one message
 * (no probing for the host location), FIFOs, sockets and devices are refused
 * before they are opened, and grep/glob patterns are capped before compiling
 * and matched in worker threads under a time limit (`TOOL_TIMEOUT`).
 */
import type { TenantOfSession } from '../fair-queue.ts';
import type { AnyToolDefinition } from '../tool.ts';
import { createEditTool } from './edit.ts';
import { createGlobTool } from './glob.ts';
import { createGrepTool } from './grep.ts';
import { type BuiltinToolLimits, resolveLimits } from './limits.ts';
import { createReadTool } from './read.ts';
import { createSearchPool } from './search-pool.ts';
import { openWorkspace } from './workspace-path.ts';
import { createWriteTool } from './write.ts';

export type { BuiltinToolLimits } from './limits.ts';
export { DEFAULT_LIMITS } from './limits.ts';
export { WorkspaceError, type WorkspaceErrorReason } from './workspace-error.ts';
export { diffHunks, NO_NEWLINE_MARKER, type DiffHunk } from './diff-hunks.ts';

export interface BuiltinToolsOptions {
  /**
   * The workspace root. Resolved to its real path once, when the tools are
   * created (throws if it does not exist); every path a tool touches must
   * stay inside it.
   */
  workspace: string;
  /** Paging and collection caps; see each field for its default. */
  limits?: BuiltinToolLimits;
  /**
   * Directory names glob and grep never descend into (at any depth). Default
   * `['.git', 'node_modules']`. read, write and edit can still name files
   * inside them explicitly.
   */
  ignoreDirectories?: readonly string[];
  /**
   * The tenant a session belongs to, for a host that serves several: grep
   * and glob calls waiting for a search worker take turns by tenant, then by
   * run. Default: no tenants (runs take turns).
   */
  tenantOf?: TenantOfSession;
}

/** The default ignore list of glob and grep. */
export const DEFAULT_IGNORE_DIRECTORIES: readonly string[] = Object.freeze(['.git', 'node_modules']);

/**
 * The five tools, ready to register: `for (const t of createBuiltinTools({ workspace })) registry.register(t)`.
 * Typed loosely as a list; each tool's exact argument and value types live in
 * its own module (`read.ts`, …) and in the generated typings.
 */
export function createBuiltinTools(options: BuiltinToolsOptions): AnyToolDefinition[] {
  const limits = resolveLimits(options.limits);
  const context = {
    workspace: openWorkspace(options.workspace),
    limits,
    ignoreDirectories: new Set(options.ignoreDirectories ?? DEFAULT_IGNORE_DIRECTORIES),
    search: createSearchPool({
      timeoutMs: limits.searchTimeoutMs,
      maxWorkers: limits.searchWorkers,
      heapMiB: limits.searchWorkerHeapMiB,
      tenantOf: options.tenantOf,
    }),
  };
  return [
    createReadTool(context),
    createWriteTool(context),
    createEditTool(context),
    createGlobTool(context),
    createGrepTool(context),
  ];
}
