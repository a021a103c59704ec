/** What every built-in tool is built from: the opened workspace and resolved limits. */
import type { ResolvedLimits } from './limits.ts';
import type { Workspace } from './workspace-path.ts';

export interface ToolContext {
  workspace: Workspace;
  limits: ResolvedLimits;
  /** Directory names glob and grep never descend into. */
  ignoreDirectories: ReadonlySet<string>;
}
