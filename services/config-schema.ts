/**
 * The shape of `ptc.config.json`, as a JSON Schema (validated with ajv) and as
 * the resolved TypeScript type. Every object is closed: an unknown key is an
 * error that names it.
 */

import { CODE_MODE_KINDS, RUNTIME_KINDS, TYPECHECK_MODES, type CodeModeKind, type RuntimeKind, type TypecheckMode } from '../src/code-mode/choices.ts';
import type { McpServerConfig } from '../src/mcp/config.ts';
import type { BuiltinToolLimits } from '../src/tools/limits.ts';

export type { McpServerConfig } from '../src/mcp/config.ts';

/** Sandbox limits; an unset field keeps the code mode default (`DEFAULT_CODE_MODE_LIMITS`). */
export interface LimitsConfig {
  /** Wall time per run incl. nested waits, ms. Default 30,000; at most 600,000. Past it: `timeout`. */
  timeoutMs?: number;
  /** Isolate heap, MiB. Default 128. Past it: `memory`. */
  memoryMiB?: number;
  /** Captured log bytes per run. Default 1 MiB. Past it: a truncation marker, the rest dropped. */
  maxLogBytes?: number;
  /** Bytes of a run's result JSON. Default 16 MiB. Past it: `output-limit`. */
  maxResultBytes?: number;
  /** Bytes (UTF-8) of one nested call's argument JSON. Default 4 MiB. Past it that call fails `INVALID_ARGS`. */
  maxArgBytes?: number;
  /** Bytes (UTF-8) of a run's result as rendered for the model. Default 1 MiB. Past it pretty-printing stops and a truncation marker ends the text; the value is unchanged. */
  maxRenderedBytes?: number;
  /** Bytes of content one stored event keeps (a nested call's arguments, a result's content). Default 1 MiB. Past it: cut, with a marker stating the original size. */
  maxEventContentBytes?: number;
  /** Bytes of content the nested-call events of one run keep together. Default 16 MiB. Past it later events keep their metadata and a marker instead of content. */
  maxRunEventBytes?: number;
  /** Session log files the server holds open at once. Default 32. Past it the least recently used idle one is closed (reopened on demand). */
  maxOpenSessionFiles?: number;
  /** Nested calls per run. Default 1,000. Past it: `call-limit`. */
  maxCalls?: number;
  /** Concurrency-safe nested calls in flight per run. Default 10; more wait. */
  maxParallelCalls?: number;
}

/**
 * Limits of the built-in workspace tools (read, write, edit, glob, grep); an
 * unset field keeps its default. Each field's default, unit and behaviour at
 * the limit: `BuiltinToolLimits` (src/tools/limits.ts) and docs/service.md.
 * The tools' descriptions, and so the typings, state the values in force.
 */
export type ToolLimitsConfig = BuiltinToolLimits;

/** Sandbox admission (both runtimes) and the child-process pool (runtime `process`). */
export interface PoolConfig {
  /** `process` runtime: child processes. Default: the CPU count. */
  children?: number;
  /**
   * Memory the runs may hold together, MiB (split evenly over the children).
   * Default: half the memory available at start, at most half the total, at
   * least 256. Past it runs queue; runs that outgrow it lose the one that grew most (`memory`).
   */
  memoryBudgetMiB?: number;
  /** What each run reserves at admission, before its isolate is measured, MiB. Default 2. */
  runReserveMiB?: number;
  /** Runs computing at once (a run awaiting a tool call does not count). Default 16 per core; more wait in the queue. */
  maxActiveRuns?: number;
  /** `process` runtime: optional hard cap on runs per child on top of the budget. Default: none. */
  runsPerChild?: number;
  /** Runs waiting for headroom. Default 1,000; a run arriving when full fails `busy` (503). */
  queueLimit?: number;
  /** Longest wait for headroom, ms. Default 5,000; past it the run fails `busy` (503). */
  queueTimeoutMs?: number;
}

/** The type-checker's worker threads (when `typecheck` is `warn` or `enforce`). */
export interface TypecheckerConfig {
  /** Worker threads, each a warm checker (~60 MiB). Default: CPU count − 1, from 1 to 4. */
  threads?: number;
  /** Heap budget of each thread, MiB. Default 512; past it the check fails and the thread is replaced. */
  heapMiB?: number;
  /** Longest one check may take, ms. Default 10,000; it never outlasts the run's own `timeoutMs` either. */
  timeoutMs?: number;
}

/** One tenant's name and bearer token. */
export interface TenantToken {
  /** 1-32 of a-z 0-9: prefixes the tenant's session and call ids on disk. */
  name: string;
  /** At least 16 characters. */
  token: string;
}

export type { CodeModeKind, RuntimeKind } from '../src/code-mode/choices.ts';
export type TypecheckSetting = TypecheckMode;
/** pino's levels, for `logLevel`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The fully resolved configuration (paths absolute). */
export interface PtcConfig {
  /** Root of the built-in workspace tools; created at start. Default `./workspace`. */
  workspace: string;
  /** Session logs and spill files. Default `./.ptc`. */
  dataDir: string;
  /** Default `127.0.0.1`. Any non-loopback host requires a token. */
  host: string;
  /** Default 7700; 0 picks a free port. */
  port: number;
  /** Bearer token required on every route but `/healthz` and `/readyz`. Default: none (loopback only). One token is one tenant. */
  token?: string;
  /**
   * Named tokens (`auth.tokens`), one per tenant: sessions, runs, cancels and
   * event reads are namespaced by the tenant's name. Default: none (then
   * `token`, if set, is the one tenant). Exclusive with `token`.
   */
  tenants: TenantToken[];
  /**
   * Extra host names accepted in `Host` and `Origin` (DNS-rebinding guard).
   * Bound to loopback, `localhost`, `127.0.0.1` and `[::1]` are always
   * accepted; bound elsewhere, an empty list accepts any `Host`. Default [].
   */
  allowedHosts: string[];
  /** Headers and body of a request must have arrived within this, ms (runs themselves may take longer). Default 30,000; past it the connection is dropped (408). */
  receiveTimeoutMs: number;
  /** Open connections in total. Default 1,024; past it new ones are closed at once. */
  maxConnections: number;
  /** Open connections per client IP. Default 128 (fetch pools keep about 1.3 sockets per concurrent request: 48 looping clients held 63); past it that client's new ones are closed at once. */
  maxConnectionsPerClient: number;
  /** Default `process` (isolates in child processes). */
  runtime: RuntimeKind;
  /** Default `code`: only `run_code` is directly callable. */
  mode: CodeModeKind;
  /** Type-check programs against the typings first: `warn` logs diagnostics, `enforce` fails the run (kind `typecheck`). Default `off`. */
  typecheck: TypecheckSetting;
  /** The type-checker's threads and budgets; an unset field keeps its default. */
  typechecker: TypecheckerConfig;
  limits: LimitsConfig;
  /** Limits of the built-in workspace tools; an unset field (or none at all) keeps its default. */
  toolLimits?: ToolLimitsConfig;
  /** Sandbox admission and the `process` runtime's pool; an unset field keeps its default. */
  pool: PoolConfig;
  /** Tool names (built-in or `<server>__<tool>`) never registered. Default []. */
  disabledTools: string[];
  /** Outer text results above `maxInlineBytes` are stored whole and previewed. Default: off. */
  spill?: { maxInlineBytes: number };
  /** Largest request body, bytes. Default 1 MiB; past it: 413. */
  bodyLimit: number;
  /** Requests per client per window. Default 6,000 per 60,000 ms; past it: 429 with Retry-After. */
  rateLimit: { max: number; timeWindow: number };
  /** Runs in flight per client. Default 32; past it: 429 with Retry-After. */
  maxConcurrentRunsPerClient: number;
  /** On SIGTERM/SIGINT, in-flight runs get this long to finish before they are cancelled, ms. Default 10,000. */
  shutdownGraceMs: number;
  /** Default `info`. Code, arguments and values are never logged at info. */
  logLevel: LogLevel;
  mcpServers: Record<string, McpServerConfig>;
  /**
   * The MCP face (`ptc mcp`, `/mcp`): run_code's description carries the whole typings while they fit this many
   * characters; past it, `search_tools` is offered and the description says to search first. Default 16,000.
   */
  typingsBudget: number;
  /**
   * PostgreSQL connection string (`postgres://user:pass@host:5432/db`): session events, runs and
   * heartbeats go to the database, shared by every replica. Default: none (JSONL files under `dataDir`).
   */
  databaseUrl?: string;
  /** Connections in this replica's PostgreSQL pool (plus one held for LISTEN). Default 10. */
  databasePoolSize: number;
}

const positiveInt = { type: 'integer', minimum: 1 } as const;

/** Every key of `ToolLimitsConfig` (test/services/config.test.ts checks none is missing). */
const TOOL_LIMITS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    readPageLines: positiveInt,
    maxLineChars: positiveInt,
    maxEditBytes: positiveInt,
    maxGrepFileBytes: positiveInt,
    maxResults: positiveInt,
    renderPageSize: positiveInt,
    maxPatternChars: positiveInt,
    maxPatternDepth: positiveInt,
    // The longest a Node timer can wait; a longer one would fire at once.
    searchTimeoutMs: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
    searchWorkers: { type: 'integer', minimum: 1, maximum: 64 },
    searchWorkerHeapMiB: positiveInt,
  },
} as const;

/** JSON Schema of the config file (every key optional). */
export const CONFIG_FILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    workspace: { type: 'string', minLength: 1 },
    dataDir: { type: 'string', minLength: 1 },
    host: { type: 'string', minLength: 1 },
    port: { type: 'integer', minimum: 0, maximum: 65535 },
    token: { type: 'string', minLength: 16 },
    runtime: { enum: RUNTIME_KINDS },
    mode: { enum: CODE_MODE_KINDS },
    typecheck: { enum: TYPECHECK_MODES },
    typechecker: {
      type: 'object',
      additionalProperties: false,
      properties: {
        threads: { type: 'integer', minimum: 1, maximum: 64 },
        heapMiB: { type: 'integer', minimum: 64 },
        timeoutMs: { type: 'integer', minimum: 1, maximum: 600_000 },
      },
    },
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        timeoutMs: { type: 'integer', minimum: 1, maximum: 600_000 },
        memoryMiB: { type: 'integer', minimum: 8 },
        maxLogBytes: positiveInt,
        maxResultBytes: positiveInt,
        maxArgBytes: positiveInt,
        maxRenderedBytes: positiveInt,
        maxEventContentBytes: positiveInt,
        maxRunEventBytes: positiveInt,
        maxOpenSessionFiles: positiveInt,
        maxCalls: positiveInt,
        maxParallelCalls: positiveInt,
      },
    },
    toolLimits: TOOL_LIMITS_SCHEMA,
    pool: {
      type: 'object',
      additionalProperties: false,
      properties: {
        children: positiveInt,
        memoryBudgetMiB: positiveInt,
        runReserveMiB: { type: 'number', exclusiveMinimum: 0 },
        maxActiveRuns: positiveInt,
        runsPerChild: positiveInt,
        queueLimit: { type: 'integer', minimum: 0 },
        queueTimeoutMs: positiveInt,
      },
    },
    disabledTools: { type: 'array', items: { type: 'string' } },
    spill: {
      type: 'object',
      additionalProperties: false,
      required: ['maxInlineBytes'],
      properties: { maxInlineBytes: { type: 'integer', minimum: 512 } },
    },
    auth: {
      type: 'object',
      additionalProperties: false,
      properties: {
        token: { type: 'string', minLength: 16 },
        tokens: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name', 'token'],
            properties: { name: { type: 'string', pattern: '^[a-z0-9]{1,32}$' }, token: { type: 'string', minLength: 16 } },
          },
        },
      },
    },
    allowedHosts: { type: 'array', items: { type: 'string', minLength: 1 } },
    receiveTimeoutMs: positiveInt,
    maxConnections: positiveInt,
    maxConnectionsPerClient: positiveInt,
    bodyLimit: positiveInt,
    rateLimit: {
      type: 'object',
      additionalProperties: false,
      properties: { max: positiveInt, timeWindow: positiveInt },
    },
    maxConcurrentRunsPerClient: positiveInt,
    shutdownGraceMs: { type: 'integer', minimum: 0 },
    logLevel: { enum: LOG_LEVELS },
    // Checked in depth by validateMcpServersConfig (src/mcp/config.ts), which names every problem.
    mcpServers: { type: 'object' },
    typingsBudget: { type: 'integer', minimum: 0 },
    databaseUrl: { type: 'string', minLength: 1 },
    databasePoolSize: { type: 'integer', minimum: 1, maximum: 1000 },
  },
} as const;

/** The config file as written (before defaults, env and flags). */
export interface ConfigFile {
  workspace?: string;
  dataDir?: string;
  host?: string;
  port?: number;
  token?: string;
  runtime?: RuntimeKind;
  mode?: CodeModeKind;
  typecheck?: TypecheckSetting;
  typechecker?: TypecheckerConfig;
  limits?: LimitsConfig;
  toolLimits?: ToolLimitsConfig;
  pool?: PoolConfig;
  disabledTools?: string[];
  spill?: { maxInlineBytes: number };
  auth?: { token?: string; tokens?: TenantToken[] };
  allowedHosts?: string[];
  receiveTimeoutMs?: number;
  maxConnections?: number;
  maxConnectionsPerClient?: number;
  bodyLimit?: number;
  rateLimit?: { max?: number; timeWindow?: number };
  maxConcurrentRunsPerClient?: number;
  shutdownGraceMs?: number;
  logLevel?: LogLevel;
  mcpServers?: Record<string, McpServerConfig>;
  typingsBudget?: number;
  databaseUrl?: string;
  databasePoolSize?: number;
}
