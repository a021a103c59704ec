// typings/builtin.d.ts: the built-in tool set. Regenerate with `npm run typings`.
type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** `& JsonObject`: extra JSON keys allowed. */
type JsonObject = { [key: string]: JsonValue };
/** Each tool's one argument, by name; the comment on an entry describes the tool. */
interface ToolArgsMap {
  /** Replace exact text in an existing text file of the workspace. old_string must match the file exactly (whitespace included) and occur once; include more surrounding lines to make it unique, or set replace_all. */
  edit: ({
    /** Path of the file, relative to the workspace root. */
    file_path: string
    /** The exact text to replace (not empty). */
    old_string: string
    /** The replacement text (must differ from old_string). */
    new_string: string
    /** Replace every occurrence instead of requiring one. Default false. */
    replace_all?: boolean
  } & JsonObject)
  /** Find files by glob pattern (such as "**\/*.ts" or "src/*.{js,json}"), matched against paths relative to path. Returns workspace-relative paths, sorted; at most 10000. Directories named .git, node_modules are skipped. */
  glob: ({
    /** Glob pattern, relative to path. */
    pattern: string
    /** Directory to search in, relative to the workspace root. Default: the root. */
    path?: string
  } & JsonObject)
  /** Search file contents with a JavaScript regular expression; returns matching lines as path:line:text. Searches a file or a directory tree (skipping binary files and .git, node_modules); at most 10000 matches. */
  grep: ({
    /** JavaScript regular expression source, such as "function\s+\w+". */
    pattern: string
    /** File or directory to search, relative to the workspace root. Default: the root. */
    path?: string
    /** Only search files matching this glob (such as "*.ts"; without a slash it matches file names). */
    glob?: string
    /** Match case-insensitively. Default false. */
    ignoreCase?: boolean
  } & JsonObject)
  /** Read a text file of the workspace as numbered lines (1-based). Pages of at most 2000 lines: pass offset (the first line number) and limit to read further. Long lines are truncated; binary files are refused. */
  read: ({
    /** Path of the file, relative to the workspace root. */
    file_path: string
    /** Line number to start at (1-based; 0 counts as 1). Default 1. */
    offset?: number
    /** Number of lines to read. Default and maximum 2000. */
    limit?: number
  } & JsonObject)
  /** Create a text file, or replace the whole content of an existing one, in the workspace. Missing parent directories are created. Prefer edit for changing part of a file. */
  write: ({
    /** Path of the file, relative to the workspace root. */
    file_path: string
    /** The complete new content of the file. */
    content: string
  } & JsonObject)
}
/** Each tool's value, by name: canonical JSON, deep-frozen. */
interface ToolOutputMap {
  edit: {
    /** Workspace-relative path. */
    path: string
    /** The content before the edit. */
    before: string
    /** The content after the edit. */
    after: string
  }
  glob: {
    /** Matching files, workspace-relative, sorted. */
    paths: string[]
  }
  grep: {
    /** In walk order: a directory's files by name, then its subdirectories; lines in file order. */
    matches: {
      /** Workspace-relative path. */
      path: string
      /** Line number, 1-based. */
      lineNumber: number
      /** The matching line, without its line ending. */
      line: string
    }[]
  }
  read: {
    /** Workspace-relative path. */
    path: string
    /** Line number of the first returned line (1-based). */
    offset: number
    lines: {
      /** Line number, 1-based. */
      number: number
      /** The line without its line ending. */
      text: string
    }[]
    /** Lines in the whole file. */
    totalLines: number
  }
  write: {
    /** Workspace-relative path. */
    path: string
    operation: ("create" | "update")
    /** The previous content; null when the file was created. */
    before: (string | null)
    /** The content now in the file. */
    after: string
  }
}
type ToolName = keyof ToolArgsMap;
/** A failed call rejects with this; catch it to recover. */
declare class ToolCallError extends Error {
  readonly name: "ToolCallError";
  /** The name called (maybe misspelt, for UNKNOWN_TOOL). */
  readonly toolName: string;
  readonly code: "UNKNOWN_TOOL" | "INVALID_ARGS" | "INVALID_TOOL_OUTPUT" | "ABORTED" | "ABORTED_BEFORE_DISPATCH" | "TOOL_TIMEOUT" | "BLOCKED" | "TOOL_FAILED";
  /** The failed call in the run's event log. */
  readonly callId: string;
}
type Tools = { readonly [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]> };
/** `await tools.name(args)` */
declare const tools: Tools;
