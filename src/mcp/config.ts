/**
 * MCP server configuration in the common `mcpServers` shape, and its
 * validator (the service's config loader calls it).
 */

interface McpServerCommon {
  /**
   * Deadline of one tool call on this server, in ms. Default 60,000. A call
   * that passes it is aborted (`TOOL_TIMEOUT`) and the MCP request cancelled.
   */
  timeoutMs?: number;
  /** Skip this server entirely (no process, no tools). Default false. */
  disabled?: boolean;
}

/** A server spawned as a child process, spoken to over stdin/stdout. */
export interface McpStdioServerConfig extends McpServerCommon {
  command: string;
  args?: string[];
  /** Added to a small safe default environment (PATH, HOME, …), not to this process's whole environment. */
  env?: Record<string, string>;
  /** Working directory of the child. Default: this process's. */
  cwd?: string;
  url?: never;
  headers?: never;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServerConfig extends McpServerCommon {
  url: string;
  /** Sent with every request (for example `Authorization`). */
  headers?: Record<string, string>;
  command?: never;
  args?: never;
  env?: never;
  cwd?: never;
}

export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** `{ [serverName]: config }`; tools are registered as `<serverName>__<toolName>`. */
export type McpServersConfig = Record<string, McpServerConfig>;

export type McpConfigCheck = { ok: true; servers: McpServersConfig } | { ok: false; errors: string[] };

/** Letters, digits, `-` and single `_`: the name prefixes tool names as `<server>__<tool>`. */
const SERVER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;
const MAX_TIMEOUT_MS = 3_600_000;

const STDIO_KEYS = new Set(['command', 'args', 'env', 'cwd', 'timeoutMs', 'disabled']);
const HTTP_KEYS = new Set(['url', 'headers', 'timeoutMs', 'disabled']);

/**
 * Checks an `mcpServers` object and lists every problem, each naming its
 * path (`mcpServers.github.args[1]`) and what to write instead. Returns the
 * input typed when it is valid; the input is not copied or defaulted.
 */
export function validateMcpServersConfig(input: unknown, root = 'mcpServers'): McpConfigCheck {
  const errors: string[] = [];
  if (!isPlainObject(input)) {
    return { ok: false, errors: [`${root} must be an object of {serverName: {command, args?} | {url, headers?}}`] };
  }
  for (const [name, entry] of Object.entries(input)) {
    const at = `${root}${/^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`}`;
    if (!SERVER_NAME.test(name) || name.length > 64) {
      errors.push(
        `${at}: server name ${JSON.stringify(name)} is not allowed: use 1-64 letters, digits, "-" or "_" (never "__", which separates server and tool in tool names)`,
      );
    }
    checkServer(entry, at, errors);
  }
  return errors.length === 0 ? { ok: true, servers: input as McpServersConfig } : { ok: false, errors };
}

function checkServer(entry: unknown, at: string, errors: string[]): void {
  if (!isPlainObject(entry)) {
    errors.push(`${at} must be an object such as {"command": "npx", "args": ["-y", "some-server"]} or {"url": "https://…/mcp"}`);
    return;
  }
  const hasCommand = 'command' in entry;
  const hasUrl = 'url' in entry;
  if (hasCommand === hasUrl) {
    errors.push(`${at} must have exactly one of "command" (a stdio server) or "url" (a Streamable HTTP server)`);
    return;
  }
  const allowed = hasCommand ? STDIO_KEYS : HTTP_KEYS;
  for (const key of Object.keys(entry)) {
    if (!allowed.has(key)) {
      errors.push(`${at}.${key} is not a known option of a ${hasCommand ? 'stdio' : 'HTTP'} server: use only ${[...allowed].join(', ')}`);
    }
  }
  if (hasCommand) {
    if (typeof entry.command !== 'string' || entry.command.trim() === '') errors.push(`${at}.command must be a non-empty string (the executable to run)`);
    if (entry.args !== undefined && !(Array.isArray(entry.args) && entry.args.every((arg) => typeof arg === 'string'))) {
      errors.push(`${at}.args must be an array of strings`);
    }
    checkStringMap(entry.env, `${at}.env`, errors);
    if (entry.cwd !== undefined && (typeof entry.cwd !== 'string' || entry.cwd === '')) errors.push(`${at}.cwd must be a non-empty string (a directory)`);
  } else {
    checkUrl(entry.url, `${at}.url`, errors);
    checkStringMap(entry.headers, `${at}.headers`, errors);
  }
  const timeout = entry.timeoutMs;
  if (timeout !== undefined && !(Number.isInteger(timeout) && (timeout as number) > 0 && (timeout as number) <= MAX_TIMEOUT_MS)) {
    errors.push(`${at}.timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  }
  if (entry.disabled !== undefined && typeof entry.disabled !== 'boolean') errors.push(`${at}.disabled must be true or false`);
}

function checkUrl(value: unknown, at: string, errors: string[]): void {
  if (typeof value !== 'string') {
    errors.push(`${at} must be a string such as "https://example.com/mcp"`);
    return;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    errors.push(`${at} is not a valid URL: write an absolute http(s) URL such as "https://example.com/mcp"`);
    return;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') errors.push(`${at} must use http: or https:, not ${url.protocol}`);
}

function checkStringMap(value: unknown, at: string, errors: string[]): void {
  if (value === undefined) return;
  if (!isPlainObject(value)) {
    errors.push(`${at} must be an object of string values`);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') errors.push(`${at}.${key} must be a string`);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
