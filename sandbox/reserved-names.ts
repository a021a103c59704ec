/**
 * Globals the bootstrap installs in every isolate (read-only, non-configurable),
 * and the built-ins it removes. One list, shared by the bootstrap loader and tests.
 */
export const RESERVED_GLOBALS = ['tools', 'ToolCallError', 'console', 'setTimeout', 'clearTimeout'] as const;

/** Removed because its memory lives outside the isolate heap limit. */
export const REMOVED_GLOBALS = ['WebAssembly'] as const;

/** Shown in frames and messages for the model's program. */
export const DEFAULT_FILENAME = 'agent.ts';
