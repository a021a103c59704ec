/** What every built-in tool is built from: the opened workspace and resolved limits. */
import type { ResolvedLimits } from './limits.ts';
import type { SearchPool } from './search-pool.ts';
import type { Workspace } from './workspace-path.ts';

export interface ToolContext {
  workspace: Workspace;
  limits: ResolvedLimits;
  /** Directory names glob and grep never descend into. */
  ignoreDirectories: ReadonlySet<string>;
  /** Where grep and glob match: worker threads, off the host's event loop. */
  search: SearchPool;
}

/**
 * The `file_path` argument of read, write and edit. Described because models
 * trained on other file tools reach for absolute paths, which are refused.
 */
export const FILE_PATH_PARAMETER = { type: 'string', required: true, description: 'Workspace-relative.' } as const;

/**
 * The `path` that each file tool's value reports, in the form the arguments
 * take; undescribed, as the typings are paid for by the byte.
 */
export const WORKSPACE_PATH_PROPERTY = { type: 'string', required: true } as const;
