// Regenerate: npm run typings
type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
type JsonObject = { [key: string]: JsonValue };
interface ToolArgsMap {
  /** Replace old_string (exact, not empty) by a different new_string in a text file; it must occur once unless replace_all. */
  edit: ({ /** Workspace-relative. */ file_path: string; old_string: string; new_string: string; replace_all?: boolean } & JsonObject)
  /** Files below path (default: root) matching pattern (e.g. "src/**\/*.ts"), as sorted workspace-relative paths; at most 10000. Skips .git, node_modules. */
  glob: ({ pattern: string; path?: string } & JsonObject)
  /** Lines matching pattern (JS regex, e.g. "def\s+\w+") in the file or tree at path (default: root); at most 10000, files before subdirectories. Skips binary files, files over 10 MiB, .git, node_modules; cuts lines at 2000 chars. */
  grep: ({ pattern: string; path?: string; /** Filter, e.g. "*.ts" (no slash: matches names). */ glob?: string; ignoreCase?: boolean } & JsonObject)
  /** Numbered lines of a text file, at most 2000 a call (page with offset). Cuts lines at 2000 chars; refuses binary files. */
  read: ({ /** Workspace-relative. */ file_path: string; /** First line, 1-based. Default 1. */ offset?: number; /** Default and max 2000. */ limit?: number } & JsonObject)
  /** Create or overwrite a text file (parent directories too). For part of a file, prefer edit. */
  write: ({ /** Workspace-relative. */ file_path: string; content: string } & JsonObject)
}
/** Values are deep-frozen. */
interface ToolOutputMap {
  edit: { path: string; before: string; after: string }
  glob: { paths: string[] }
  grep: { matches: { path: string; lineNumber: number; line: string }[] }
  read: { path: string; offset: number; lines: { number: number; /** Without line ending. */ text: string }[]; totalLines: number }
  write: { path: string; operation: ("create" | "update"); before: (string | null); after: string }
}
type ToolName = keyof ToolArgsMap;
/** A failed call rejects with this. */
declare class ToolCallError extends Error {
  readonly name: "ToolCallError";
  readonly toolName: string;
  readonly code: "UNKNOWN_TOOL" | "INVALID_ARGS" | "INVALID_TOOL_OUTPUT" | "ABORTED" | "ABORTED_BEFORE_DISPATCH" | "TOOL_TIMEOUT" | "BLOCKED" | "TOOL_FAILED";
  readonly callId: string;
}
type Tools = { readonly [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]> };
declare const tools: Tools;
