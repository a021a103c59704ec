/**
 * The shape of `ptc.config.json`, described once as a zod schema. From it
 * come the TypeScript types (`ConfigFile` as written, `PtcConfig` resolved),
 * the JSON Schema (`CONFIG_FILE_JSON_SCHEMA`, descriptions included) and the
 * CLI's choices. Every object is strict: an unknown key is an error that names it.
 */

import * as z from 'zod/v4';
import { CODE_MODE_KINDS, RUNTIME_KINDS, TYPECHECK_MODES } from '../src/code-mode/choices.ts';
import type { McpServerConfig } from '../src/mcp/config.ts';
import { OPENAPI_DEFAULTS, SOURCE_NAME, type OpenApiSourceConfig } from '../src/openapi/config.ts';
import { DEFAULT_APPROVAL_TTL_MS } from '../src/code-mode/code-mode.ts';
import { CODE_MODE_LIMITS_SCHEMA, DEFAULT_CODE_MODE_LIMITS, type CodeModeLimits } from '../src/code-mode/limits.ts';
import type { LimitRule } from '../src/schema/limit-rules.ts';
import { MAX_TIMEOUT_MS as MAX_TIMER_MS } from '../src/definition-rules.ts';
import { DEFAULT_EVENT_CAPS, EVENT_CAPS_SCHEMA, type EventCaps } from '../src/event-sinks/event-caps.ts';
import { DEFAULT_MAX_OPEN_FILES } from '../src/event-sinks/jsonl-sink.ts';
import { BUILTIN_TOOL_LIMITS_SCHEMA, DEFAULT_LIMITS as DEFAULT_TOOL_LIMITS, type BuiltinToolLimits } from '../src/tools/limits.ts';
import { MIN_DEFAULT_MEMORY_BUDGET_MIB } from '../sandbox/memory-budget.ts';
import { DEFAULT_POOL } from '../src/code-mode/pool-defaults.ts';
import { DEFAULT_TYPECHECK_HEAP_MIB, DEFAULT_TYPECHECK_TIMEOUT_MS, MAX_DEFAULT_TYPECHECK_THREADS } from '../typings/typecheck-pool.ts';
import { DEFAULTS } from './config-defaults.ts';
import { DEFAULT_RETENTION } from './retention.ts';

export type { McpServerConfig } from '../src/mcp/config.ts';
export type { CodeModeKind, RuntimeKind } from '../src/code-mode/choices.ts';

/** An integer of at least 1 (JSON: a whole number; 1.5 and "5" are refused). */
const positiveInt = () => z.int().min(1);
/** A group of settings: every key optional, an unknown key refused (named in the error). */
function group<Shape extends z.ZodRawShape>(description: string, shape: Shape) {
  return z.strictObject(shape).partial().describe(description);
}
const SIZES = [
  [1024 ** 3, 'GiB'],
  [1024 ** 2, 'MiB'],
  [1024, 'KiB'],
] as const;

/**
 * A default as the descriptions state it, read from the object that holds it (written once): a
 * string in backticks, a size in bytes in whole KiB, MiB or GiB, any other number with thousands
 * separators (test/services/documented-defaults.test.ts holds docs/service.md to the same values).
 */
function shown(value: number | string, unit: 'bytes' | 'plain' = 'plain'): string {
  if (typeof value === 'string') return `\`${value}\``;
  const size = unit === 'bytes' ? SIZES.find(([bytes]) => value % bytes === 0) : undefined;
  return size === undefined ? value.toLocaleString('en-US') : `${value / size[0]} ${size[1]}`;
}
/** `description` with its `{default}` as `Default <value>` (see {@link shown}). */
function stateDefault(description: string, value: number | string, unit: 'bytes' | 'plain' = 'plain'): string {
  return description.replace('{default}', `Default ${shown(value, unit)}`);
}
/** A limit as the file takes it: the rule its layer states for it (and checks again when it resolves its limits). */
function fromRule(rule: LimitRule) {
  const atLeast = z.int().min(rule.minimum);
  return rule.maximum === undefined ? atLeast : atLeast.max(rule.maximum);
}
/** A code mode limit: its rule in `CODE_MODE_LIMITS_SCHEMA`, described with its default from `DEFAULT_CODE_MODE_LIMITS`. */
function codeModeLimit(key: keyof CodeModeLimits, description: string, unit?: 'bytes') {
  return fromRule(CODE_MODE_LIMITS_SCHEMA.properties[key]).describe(stateDefault(description, DEFAULT_CODE_MODE_LIMITS[key], unit));
}
/** An event cap: its rule in `EVENT_CAPS_SCHEMA`, described with its default from `DEFAULT_EVENT_CAPS`. */
function eventCap(key: keyof EventCaps, description: string) {
  return fromRule(EVENT_CAPS_SCHEMA.properties[key]).describe(stateDefault(description, DEFAULT_EVENT_CAPS[key], 'bytes'));
}
/** A built-in tools' limit: its rule in `BUILTIN_TOOL_LIMITS_SCHEMA`, described with its default from their `DEFAULT_LIMITS`. */
function toolLimit(key: keyof BuiltinToolLimits, description: string, unit?: 'bytes') {
  return fromRule(BUILTIN_TOOL_LIMITS_SCHEMA.properties[key]).describe(stateDefault(description, DEFAULT_TOOL_LIMITS[key], unit));
}

const limitsSchema = group('Sandbox limits; an unset field keeps the code mode default (`DEFAULT_CODE_MODE_LIMITS`).', {
  // The file has no maxTimeoutMs: the default one bounds timeoutMs.
  timeoutMs: fromRule(CODE_MODE_LIMITS_SCHEMA.properties.timeoutMs)
    .max(DEFAULT_CODE_MODE_LIMITS.maxTimeoutMs)
    .describe(
      stateDefault(`Wall time per run incl. nested waits, ms. {default}; at most ${shown(DEFAULT_CODE_MODE_LIMITS.maxTimeoutMs)}. Past it: \`timeout\`.`, DEFAULT_CODE_MODE_LIMITS.timeoutMs),
    ),
  memoryMiB: codeModeLimit('memoryMiB', 'Isolate heap, MiB. {default}. Past it: `memory`.'),
  maxLogBytes: codeModeLimit('maxLogBytes', 'Captured log bytes per run. {default}. Past it: a truncation marker, the rest dropped.', 'bytes'),
  maxResultBytes: codeModeLimit('maxResultBytes', "Bytes of a run's result JSON. {default}. Past it: `output-limit`.", 'bytes'),
  maxArgBytes: codeModeLimit('maxArgBytes', "Bytes (UTF-8) of one nested call's argument JSON. {default}. Past it that call fails `INVALID_ARGS`.", 'bytes'),
  maxRenderedBytes: codeModeLimit('maxRenderedBytes', "Bytes (UTF-8) of a run's result as rendered for the model. {default}. Past it pretty-printing stops and a truncation marker ends the text; the value is unchanged.", 'bytes'),
  maxEventContentBytes: eventCap('maxEventContentBytes', "Bytes of content one stored event keeps (a result's content, an injected context). {default}. Past it: cut, with a marker stating the original size."),
  maxRunEventBytes: eventCap('maxRunEventBytes', 'Bytes of content the nested-call events of one run keep together. {default}. Past it later events keep their metadata and a marker instead of content.'),
  maxEventArgumentBytes: eventCap('maxEventArgumentBytes', "Bytes of a nested call's argument JSON its stored `tool/ptc-dispatch-start` keeps. {default}. Past it: a marker with the full size and the start of the JSON."),
  maxOpenSessionFiles: positiveInt().describe(
    stateDefault('Session log files the server holds open at once. {default}. Past it the least recently used idle one is closed (reopened on demand).', DEFAULT_MAX_OPEN_FILES),
  ),
  maxCalls: codeModeLimit('maxCalls', 'Nested calls per run. {default}. Past it: `call-limit`.'),
  maxParallelCalls: codeModeLimit('maxParallelCalls', 'Concurrency-safe nested calls in flight per run. {default}; more wait.'),
  maxJournalValueBytes: codeModeLimit('maxJournalValueBytes', "Bytes (UTF-8) of one nested call's value a paused run's journal may keep. {default}. Past it the pause fails: `output-limit`.", 'bytes'),
});
export type LimitsConfig = z.infer<typeof limitsSchema>;

// Each key's default, unit and behaviour at the limit are documented on
// `BuiltinToolLimits` (src/tools/limits.ts, which src/ keeps as its own type)
// and in docs/service.md; `ToolLimitsConfig` below must equal that type.
const toolLimitsSchema = group(
  "Limits of the built-in workspace tools (read, write, edit, glob, grep); an unset field keeps its default. The tools' descriptions, and so the typings, state the values in force.",
  {
    readPageLines: toolLimit('readPageLines', 'read: lines returned per call. {default}.'),
    maxLineChars: toolLimit('maxLineChars', 'read and grep: characters kept of one line. {default}.'),
    maxEditBytes: toolLimit('maxEditBytes', 'write and edit: largest file, bytes, before or after the change. {default}.', 'bytes'),
    minFreeDiskMiB: toolLimit('minFreeDiskMiB', "write and edit: space the workspace's disk keeps free, MiB; 0 turns it off. {default}."),
    maxGrepFileBytes: toolLimit('maxGrepFileBytes', 'grep: files larger than this, bytes, are skipped. {default}.', 'bytes'),
    maxResults: toolLimit('maxResults', 'glob and grep: items collected by one call. {default}.'),
    renderPageSize: toolLimit('renderPageSize', 'glob and grep: items shown in the render. {default}.'),
    maxPatternChars: toolLimit('maxPatternChars', 'grep and glob: longest pattern, characters. {default}.'),
    maxPatternDepth: toolLimit('maxPatternDepth', 'grep and glob: deepest nesting of groups, levels. {default}.'),
    searchTimeoutMs: toolLimit('searchTimeoutMs', "grep and glob: time one call's search may run in its worker, ms. {default}."),
    searchWorkers: toolLimit('searchWorkers', 'grep and glob: worker threads doing the matching. {default}.'),
    searchWorkerHeapMiB: toolLimit('searchWorkerHeapMiB', 'grep and glob: heap of one search worker, MiB. {default}.'),
  },
);
export type ToolLimitsConfig = z.infer<typeof toolLimitsSchema>;
// Compile-time drift check: the schema's keys are exactly BuiltinToolLimits' keys.
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
const toolLimitsMatch: SameKeys<ToolLimitsConfig, BuiltinToolLimits> = true;
void toolLimitsMatch;

const poolSchema = group("Sandbox admission (both runtimes) and the `process` runtime's child-process pool; an unset field keeps its default.", {
  children: positiveInt().describe('`process` runtime: child processes. Default: the CPU count.'),
  memoryBudgetMiB: positiveInt().describe(
    `Memory the runs may hold together, MiB (split evenly over the children). Default: half the memory available at start, at most half the total, at least ${MIN_DEFAULT_MEMORY_BUDGET_MIB}. Past it runs queue; runs that outgrow it lose the one that grew most (\`memory\`).`,
  ),
  runReserveMiB: z.number().gt(0).describe(stateDefault('What each run reserves at admission, before its isolate is measured, MiB. {default}.', DEFAULT_POOL.runReserveMiB)),
  maxActiveRuns: positiveInt().describe(`Runs computing at once (a run awaiting a tool call does not count). Default ${DEFAULT_POOL.activeRunsPerCore} per core; more wait in the queue.`),
  runsPerChild: positiveInt().describe('`process` runtime: optional hard cap on runs per child on top of the budget. Default: none.'),
  burstThreads: z.int().min(0).max(64).describe(`\`in-process\` runtime: worker threads that prepare and run the runs of a burst (more than 16 runs waiting to start) in parallel (tools stay on the main thread). Default: the CPU count, at most ${DEFAULT_POOL.maxBurstThreads}; 0 prepares every run on the main thread.`),
  sessionIsolates: z
    .int()
    .min(0)
    .describe(
      stateDefault(
        "Isolates kept for a session's next run (per child in the `process` runtime): a run that ended cleanly leaves its isolate, with a fresh context, to the next run of the same session, never to another session. {default}; 0: a fresh isolate for every run.",
        DEFAULT_POOL.sessionIsolates,
      ),
    ),
  sessionIsolateIdleMs: positiveInt().describe(stateDefault("How long a kept isolate waits for its session's next run, ms. {default}.", DEFAULT_POOL.sessionIsolateIdleMs)),
  queueLimit: z.int().min(0).describe(stateDefault('Runs waiting for headroom. {default}; a run arriving when full fails `busy` (503).', DEFAULT_POOL.queueLimit)),
  queueTimeoutMs: positiveInt().describe(
    stateDefault('How long the wait queue may stand still, ms: a run waits while runs keep starting from the queue, and fails `busy` (503) once none has started for this long and it has waited this long (time the sandbox spends starting does not count). {default}.', DEFAULT_POOL.queueTimeoutMs),
  ),
});
export type PoolConfig = z.infer<typeof poolSchema>;

const typecheckerSchema = group("The type-checker's worker threads (when `typecheck` is `warn` or `enforce`); an unset field keeps its default.", {
  threads: z.int().min(1).max(64).describe(`Worker threads, each a warm checker (~60 MiB). Default: CPU count − 1, from 1 to ${MAX_DEFAULT_TYPECHECK_THREADS}.`),
  heapMiB: z.int().min(64).describe(stateDefault('Heap budget of each thread, MiB. {default}; past it the check fails and the thread is replaced.', DEFAULT_TYPECHECK_HEAP_MIB)),
  timeoutMs: z.int().min(1).max(600_000).describe(stateDefault("Longest one check may take, ms. {default}; it never outlasts the run's own `timeoutMs` either.", DEFAULT_TYPECHECK_TIMEOUT_MS)),
});
export type TypecheckerConfig = z.infer<typeof typecheckerSchema>;

const tokenSchema = z.string().min(16);

const tenantTokenSchema = z
  .strictObject({
    name: z.string().regex(/^[a-z0-9]{1,32}$/).describe("1-32 of a-z 0-9: prefixes the tenant's session and call ids on disk."),
    token: tokenSchema.describe('At least 16 characters.'),
  })
  .describe("One tenant's name and bearer token.");
export type TenantToken = z.infer<typeof tenantTokenSchema>;

const openApiSourceSchema = z
  .strictObject({
    spec: z.string().min(1).describe('The spec: a path (relative to this file) or an http(s) URL; JSON or YAML; OpenAPI 3.0, 3.1 or Swagger 2.0.'),
    baseUrl: z.url().describe("Where requests go. Default: the spec's first server (3.x) or its host and basePath (2.0)."),
    headers: z
      .record(z.string(), z.string())
      .describe('Sent with every request (credentials: `{"Authorization": "Bearer ${env:GITHUB_TOKEN}"}`); `${env:NAME}` is read from the environment at start. Never shown to programs. Default {}.'),
    include: z.array(z.string().min(1)).describe('Only operations matching one of these globs (over the operationId, or `METHOD /path`). Default: all.'),
    exclude: z.array(z.string().min(1)).describe('Operations matching one of these globs are left out. Default: none.'),
    timeoutMs: z.int().min(1).max(MAX_TIMER_MS).describe(stateDefault('Deadline of one call, retries included, ms. {default}; past it: `TOOL_TIMEOUT`.', OPENAPI_DEFAULTS.timeoutMs)),
    maxResponseBytes: positiveInt().describe(stateDefault('Largest response body read, bytes. {default}; a larger one fails the call.', OPENAPI_DEFAULTS.maxResponseBytes, 'bytes')),
    retries: z.int().min(0).max(10).describe(stateDefault('Retries of a call answered 429 or 503, after its `Retry-After`, within `timeoutMs`. {default}.', OPENAPI_DEFAULTS.retries)),
    approvals: z
      .union([
        z.array(z.string().min(1)),
        z.strictObject({ methods: z.array(z.enum(['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'])).min(1) }),
      ])
      .describe('Operations that need approval before they run: globs as in `include`, or `{"methods": ["DELETE", "POST"]}`. Default: none.'),
  })
  .partial()
  .required({ spec: true })
  .describe('One OpenAPI spec as a tool source: one tool `<name>__<operationId>` per operation, requests made by the host.');

// Compile-time drift check: what the file accepts is what the OpenAPI source takes.
const openApiMatch = (file: z.infer<typeof openApiSourceSchema>): OpenApiSourceConfig => file;
void openApiMatch;

/** pino's levels, for `logLevel`. */
const logLevelSchema = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
export type LogLevel = z.infer<typeof logLevelSchema>;

/** The config file as written (every key optional; defaults, env and flags come later, in config.ts). */
export const configFileSchema = group('ptc.config.json: the configuration of the ptc service. Precedence: defaults < this file < environment < flags.', {
  $schema: z.string().describe('The JSON Schema of this file, for editors; ignored.'),
  workspace: z.string().min(1).describe(stateDefault('Root of the built-in workspace tools; created at start. {default}.', DEFAULTS.workspace)),
  dataDir: z.string().min(1).describe(stateDefault('Session logs and spill files. {default}.', DEFAULTS.dataDir)),
  host: z.string().min(1).describe(stateDefault('{default}. Any non-loopback host requires a token.', DEFAULTS.host)),
  port: z.int().min(0).max(65535).describe(`Default ${DEFAULTS.port}; 0 picks a free port.`),
  token: tokenSchema.describe(
    'Bearer token required on every route but `/healthz` and `/readyz`, at least 16 characters. Default: none (loopback only). One token is one tenant.',
  ),
  runtime: z.enum(RUNTIME_KINDS).describe(stateDefault('{default} (isolates in child processes).', DEFAULTS.runtime)),
  mode: z.enum(CODE_MODE_KINDS).describe(stateDefault('{default}: only `run_code` is directly callable.', DEFAULTS.mode)),
  typecheck: z.enum(TYPECHECK_MODES).describe(
    stateDefault('Type-check programs against the typings first: `warn` logs diagnostics, `enforce` fails the run (kind `typecheck`). {default}.', DEFAULTS.typecheck),
  ),
  typechecker: typecheckerSchema,
  limits: limitsSchema,
  toolLimits: toolLimitsSchema,
  pool: poolSchema,
  disabledTools: z.array(z.string()).describe('Tool names (built-in or `<server>__<tool>`) never registered. Default [].'),
  retention: group('Session logs: how long they are kept and how much each session and tenant may hold; an unset field keeps its default.', {
    maxAgeDays: positiveInt().describe(
      stateDefault("Session logs with no event for this many days are removed (checked hourly). {default}. A paused run's journal is kept as long after it expired or its resumed run ended (it can be rolled back until then).", DEFAULT_RETENTION.maxAgeDays),
    ),
    maxSessionBytes: positiveInt().describe(stateDefault("Bytes one session's log may hold. {default}; past it the session's new runs get 507 `STORAGE_QUOTA`.", DEFAULT_RETENTION.maxSessionBytes, 'bytes')),
    maxTenantBytes: positiveInt().describe(
      stateDefault("Bytes the session logs of one tenant (of everyone, without named tokens) may hold. {default}; past it the tenant's new runs get 507 `STORAGE_QUOTA`.", DEFAULT_RETENTION.maxTenantBytes, 'bytes'),
    ),
  }),
  spill: z
    .strictObject({ maxInlineBytes: z.int().min(512) })
    .describe('Outer text results above `maxInlineBytes` are stored whole and previewed. Default: off.'),
  auth: group('Bearer tokens: one (`token`) or one per tenant (`tokens`).', {
    token: tokenSchema.describe('The same as `token` (set only one of them).'),
    tokens: z
      .array(tenantTokenSchema)
      .min(1)
      .describe(
        "Named tokens, one per tenant: sessions, runs, cancels and event reads are namespaced by the tenant's name. Names and tokens unique. Default: none (then `token`, if set, is the one tenant). Exclusive with `token`.",
      ),
  }),
  allowedHosts: z
    .array(z.string().min(1))
    .describe(
      'Extra host names accepted in `Host` and `Origin` (DNS-rebinding guard). Bound to loopback, `localhost`, `127.0.0.1` and `[::1]` are always accepted; bound elsewhere, an empty list accepts any `Host`. Default [].',
    ),
  receiveTimeoutMs: positiveInt().describe(
    stateDefault('Headers and body of a request must have arrived within this, ms (runs themselves may take longer). {default}; past it the connection is dropped (408).', DEFAULTS.receiveTimeoutMs),
  ),
  maxConnections: positiveInt().describe(stateDefault('Open connections in total. {default}; past it new ones are closed at once.', DEFAULTS.maxConnections)),
  maxConnectionsPerClient: positiveInt().describe(
    stateDefault("Open connections per client IP. {default} (fetch pools keep more sockets than requests in flight); past it that client's new ones are closed at once.", DEFAULTS.maxConnectionsPerClient),
  ),
  bodyLimit: positiveInt().describe(stateDefault('Largest request body, bytes. {default}; past it: 413.', DEFAULTS.bodyLimit, 'bytes')),
  writeStallMs: z
    .int()
    .min(1)
    .max(MAX_TIMER_MS)
    .describe(stateDefault('A client that has taken none of the bytes sent to it for this long is disconnected, ms. {default}.', DEFAULTS.writeStallMs)),
  maxOutboundMiB: positiveInt().describe(
    stateDefault('Bytes sent to clients and not yet taken by them, all connections together, MiB. {default}; past it new runs, event pages and follows get 503 `UNDER_PRESSURE`.', DEFAULTS.maxOutboundMiB),
  ),
  maxConnectionOutboundMiB: positiveInt().describe(
    stateDefault("Bytes one connection may hold sent but not taken, MiB. {default}; a stream past it (a run's live events) is disconnected. Large bodies and live follows wait for the client instead.", DEFAULTS.maxConnectionOutboundMiB),
  ),
  rateLimit: group(`Requests per client per window (ms). Default ${shown(DEFAULTS.rateLimit.max)} per ${shown(DEFAULTS.rateLimit.timeWindow)} ms; past it: 429 with Retry-After.`, {
    max: positiveInt().describe(stateDefault('Requests per client per window. {default}.', DEFAULTS.rateLimit.max)),
    timeWindow: positiveInt().describe(stateDefault('The window, ms. {default}.', DEFAULTS.rateLimit.timeWindow)),
  }),
  maxConcurrentRunsPerClient: positiveInt().describe(stateDefault('Runs in flight per client. {default}; past it: 429 with Retry-After.', DEFAULTS.maxConcurrentRunsPerClient)),
  maxMcpSessionsPerTenant: positiveInt().describe(
    stateDefault(
      "MCP sessions (`/mcp`) one tenant keeps open. {default}; past it that tenant's least recently used session with no call in flight is closed, or, when every one has a call in flight, the new one is refused (503).",
      DEFAULTS.maxMcpSessionsPerTenant,
    ),
  ),
  shutdownGraceMs: z.int().min(0).describe(stateDefault('On SIGTERM/SIGINT, in-flight runs get this long to finish before they are cancelled, ms. {default}.', DEFAULTS.shutdownGraceMs)),
  shutdownMarginMs: z
    .int()
    .min(0)
    .describe(
      stateDefault(
        '`ptc serve`: how long past `shutdownGraceMs` a shutdown may take (a dependency that stopped answering, such as a paused database) before the server exits anyway with 1, naming the step it was in, ms. {default}.',
        DEFAULTS.shutdownMarginMs,
      ),
    ),
  logLevel: logLevelSchema.describe(stateDefault('{default}. Code, arguments and values are never logged at info.', DEFAULTS.logLevel)),
  // Checked in depth by validateMcpServersConfig (src/mcp/config.ts), which names every problem.
  mcpServers: z
    .record(z.string(), z.unknown())
    .describe('MCP servers: `{"name": {"command", "args", "env", "cwd"}}` or `{"name": {"url", "headers"}}`; their tools become `<name>__<tool>`. Default {}.'),
  tools: z
    .array(z.string().min(1))
    .describe(
      'Tool modules: paths (relative to this file) or package specifiers whose `defineTool` definitions are registered (a default array, or named exports); TypeScript loads through type stripping. A module that fails to load or register stops the start. Default [].',
    ),
  openapi: z
    .record(z.string().regex(SOURCE_NAME), openApiSourceSchema)
    .describe('OpenAPI specs as tool sources: `{"name": {"spec", "baseUrl", "headers", …}}`; each operation becomes `<name>__<operationId>`. Default {}.'),
  typingsBudget: z
    .int()
    .min(0)
    .describe(
      stateDefault(
        "The MCP face (`ptc mcp`, `/mcp`): run_code's description carries the whole typings while they fit this many characters; past it, `search_tools` is offered and the description says to search first. {default}.",
        DEFAULTS.typingsBudget,
      ),
    ),
  databaseUrl: z
    .string()
    .min(1)
    .describe(
      'PostgreSQL connection string (`postgres://user:pass@host:5432/db`): session events, runs and heartbeats go to the database, shared by every replica. Default: none (JSONL files under `dataDir`).',
    ),
  databasePoolSize: z.int().min(1).max(1000).describe(stateDefault("Connections in this replica's PostgreSQL pool (plus one held for LISTEN). {default}.", DEFAULTS.databasePoolSize)),
  approvals: z
    .array(
      z
        .strictObject({
          tools: z.string().min(1).describe('A glob of tool names (picomatch), such as `github__create_*`.'),
          when: z.literal('always').describe('`always`: every call of a matching tool waits for a decision.'),
        })
        .describe('One approval rule.'),
    )
    .describe(
      "Tools whose calls from a program wait for a person's approval (the run pauses; `POST /v1/runs/:callId/decision` resumes it), besides those whose definitions say so. For MCP and other tools you do not write. Default [].",
    ),
  approvalTtlMs: z
    .int()
    .min(1)
    .describe(stateDefault('How long a paused run waits for a decision, ms. {default}; a later decision denies the call with reason `expired`.', DEFAULT_APPROVAL_TTL_MS)),
});

/** The config file as written (before defaults, env and flags). */
export type ConfigFile = z.infer<typeof configFileSchema>;

/** The JSON Schema of the config file, derived from {@link configFileSchema} (descriptions included). */
export const CONFIG_FILE_JSON_SCHEMA = z.toJSONSchema(configFileSchema, { io: 'input' });

/** Keys the loader fills with a default when neither file, env nor flag sets them. */
type Defaulted =
  | 'workspace'
  | 'dataDir'
  | 'host'
  | 'port'
  | 'allowedHosts'
  | 'receiveTimeoutMs'
  | 'maxConnections'
  | 'maxConnectionsPerClient'
  | 'writeStallMs'
  | 'maxOutboundMiB'
  | 'maxConnectionOutboundMiB'
  | 'runtime'
  | 'mode'
  | 'typecheck'
  | 'typechecker'
  | 'limits'
  | 'pool'
  | 'retention'
  | 'disabledTools'
  | 'bodyLimit'
  | 'maxConcurrentRunsPerClient'
  | 'maxMcpSessionsPerTenant'
  | 'shutdownGraceMs'
  | 'shutdownMarginMs'
  | 'logLevel'
  | 'typingsBudget'
  | 'databasePoolSize'
  | 'tools'
  | 'openapi'
  | 'approvals'
  | 'approvalTtlMs';

/**
 * The fully resolved configuration (paths absolute): the file's keys with
 * their defaults filled in, `token`/`auth.token` merged into `token`, and
 * `auth.tokens` as `tenants` (empty when unset).
 */
export type PtcConfig = Required<Pick<ConfigFile, Defaulted>> &
  Pick<ConfigFile, 'token' | 'toolLimits' | 'spill' | 'databaseUrl'> & {
    tenants: TenantToken[];
    rateLimit: Required<NonNullable<ConfigFile['rateLimit']>>;
    /** Validated by `validateMcpServersConfig`, stdio `cwd`s and relative `args` resolved against the file's folder. */
    mcpServers: Record<string, McpServerConfig>;
    /** The config file's folder (the working directory without one): package specifiers in `tools` resolve from it. */
    configDir: string;
    /** The config file read, if one was. */
    configFile?: string;
  };
