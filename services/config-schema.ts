/**
 * The shape of `ptc.config.json`, described once as a zod schema. From it
 * come the TypeScript types (`ConfigFile` as written, `PtcConfig` resolved),
 * the JSON Schema (`CONFIG_FILE_JSON_SCHEMA`, descriptions included) and the
 * CLI's choices. Every object is strict: an unknown key is an error that names it.
 */

import * as z from 'zod/v4';
import { CODE_MODE_KINDS, RUNTIME_KINDS, TYPECHECK_MODES } from '../src/code-mode/choices.ts';
import type { McpServerConfig } from '../src/mcp/config.ts';
import type { OpenApiSourceConfig } from '../src/openapi/config.ts';
import type { BuiltinToolLimits } from '../src/tools/limits.ts';

export type { McpServerConfig } from '../src/mcp/config.ts';
export type { CodeModeKind, RuntimeKind } from '../src/code-mode/choices.ts';

/** An integer of at least 1 (JSON: a whole number; 1.5 and "5" are refused). */
const positiveInt = () => z.int().min(1);
/** A group of settings: every key optional, an unknown key refused (named in the error). */
function group<Shape extends z.ZodRawShape>(description: string, shape: Shape) {
  return z.strictObject(shape).partial().describe(description);
}
/** The longest a Node timer can wait; a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

const limitsSchema = group('Sandbox limits; an unset field keeps the code mode default (`DEFAULT_CODE_MODE_LIMITS`).', {
  timeoutMs: z.int().min(1).max(600_000).describe('Wall time per run incl. nested waits, ms. Default 30,000; at most 600,000. Past it: `timeout`.'),
  memoryMiB: z.int().min(8).describe('Isolate heap, MiB. Default 128. Past it: `memory`.'),
  maxLogBytes: positiveInt().describe('Captured log bytes per run. Default 1 MiB. Past it: a truncation marker, the rest dropped.'),
  maxResultBytes: positiveInt().describe("Bytes of a run's result JSON. Default 16 MiB. Past it: `output-limit`."),
  maxArgBytes: positiveInt().describe("Bytes (UTF-8) of one nested call's argument JSON. Default 4 MiB. Past it that call fails `INVALID_ARGS`."),
  maxRenderedBytes: positiveInt().describe(
    "Bytes (UTF-8) of a run's result as rendered for the model. Default 1 MiB. Past it pretty-printing stops and a truncation marker ends the text; the value is unchanged.",
  ),
  maxEventContentBytes: positiveInt().describe(
    "Bytes of content one stored event keeps (a result's content, an injected context). Default 1 MiB. Past it: cut, with a marker stating the original size.",
  ),
  maxRunEventBytes: positiveInt().describe(
    'Bytes of content the nested-call events of one run keep together. Default 4 MiB. Past it later events keep their metadata and a marker instead of content.',
  ),
  maxEventArgumentBytes: positiveInt().describe(
    "Bytes of a nested call's argument JSON its stored `tool/ptc-dispatch-start` keeps. Default 64 KiB. Past it: a marker with the full size and the start of the JSON.",
  ),
  maxOpenSessionFiles: positiveInt().describe(
    'Session log files the server holds open at once. Default 32. Past it the least recently used idle one is closed (reopened on demand).',
  ),
  maxCalls: positiveInt().describe('Nested calls per run. Default 1,000. Past it: `call-limit`.'),
  maxParallelCalls: positiveInt().describe('Concurrency-safe nested calls in flight per run. Default 10; more wait.'),
  maxJournalValueBytes: positiveInt().describe(
    "Bytes (UTF-8) of one nested call's value a paused run's journal may keep. Default 1 MiB. Past it the pause fails: `output-limit`.",
  ),
});
export type LimitsConfig = z.infer<typeof limitsSchema>;

// Each key's default, unit and behaviour at the limit are documented on
// `BuiltinToolLimits` (src/tools/limits.ts, which src/ keeps as its own type)
// and in docs/service.md; `ToolLimitsConfig` below must equal that type.
const toolLimitsSchema = group(
  "Limits of the built-in workspace tools (read, write, edit, glob, grep); an unset field keeps its default. The tools' descriptions, and so the typings, state the values in force.",
  {
    readPageLines: positiveInt().describe('read: lines returned per call. Default 2,000.'),
    maxLineChars: positiveInt().describe('read and grep: characters kept of one line. Default 2,000.'),
    maxEditBytes: positiveInt().describe('write and edit: largest file, bytes, before or after the change. Default 10 MiB.'),
    maxGrepFileBytes: positiveInt().describe('grep: files larger than this, bytes, are skipped. Default 10 MiB.'),
    maxResults: positiveInt().describe('glob and grep: items collected by one call. Default 10,000.'),
    renderPageSize: positiveInt().describe('glob and grep: items shown in the render. Default 100.'),
    maxPatternChars: positiveInt().describe('grep and glob: longest pattern, characters. Default 1,000.'),
    maxPatternDepth: positiveInt().describe('grep and glob: deepest nesting of groups, levels. Default 20.'),
    searchTimeoutMs: z.int().min(1).max(MAX_TIMER_MS).describe("grep and glob: time one call's search may run in its worker, ms. Default 20,000."),
    searchWorkers: z.int().min(1).max(64).describe('grep and glob: worker threads doing the matching. Default 2.'),
    searchWorkerHeapMiB: positiveInt().describe('grep and glob: heap of one search worker, MiB. Default 256.'),
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
    'Memory the runs may hold together, MiB (split evenly over the children). Default: half the memory available at start, at most half the total, at least 256. Past it runs queue; runs that outgrow it lose the one that grew most (`memory`).',
  ),
  runReserveMiB: z.number().gt(0).describe('What each run reserves at admission, before its isolate is measured, MiB. Default 2.'),
  maxActiveRuns: positiveInt().describe('Runs computing at once (a run awaiting a tool call does not count). Default 16 per core; more wait in the queue.'),
  runsPerChild: positiveInt().describe('`process` runtime: optional hard cap on runs per child on top of the budget. Default: none.'),
  burstThreads: z.int().min(0).max(64).describe('`in-process` runtime: worker threads that prepare and run the runs of a burst (more than 16 runs waiting to start) in parallel (tools stay on the main thread). Default: the CPU count, at most 8; 0 prepares every run on the main thread.'),
  sessionIsolates: z
    .int()
    .min(0)
    .describe(
      "Isolates kept for a session's next run (per child in the `process` runtime): a run that ended cleanly leaves its isolate, with a fresh context, to the next run of the same session, never to another session. Default 16; 0: a fresh isolate for every run.",
    ),
  sessionIsolateIdleMs: positiveInt().describe("How long a kept isolate waits for its session's next run, ms. Default 30,000."),
  queueLimit: z.int().min(0).describe('Runs waiting for headroom. Default 1,000; a run arriving when full fails `busy` (503).'),
  queueTimeoutMs: positiveInt().describe(
    'How long the wait queue may stand still, ms: a run waits while runs keep starting from the queue, and fails `busy` (503) once none has started for this long and it has waited this long (time the sandbox spends starting does not count). Default 5,000.',
  ),
});
export type PoolConfig = z.infer<typeof poolSchema>;

const typecheckerSchema = group("The type-checker's worker threads (when `typecheck` is `warn` or `enforce`); an unset field keeps its default.", {
  threads: z.int().min(1).max(64).describe('Worker threads, each a warm checker (~60 MiB). Default: CPU count − 1, from 1 to 4.'),
  heapMiB: z.int().min(64).describe('Heap budget of each thread, MiB. Default 512; past it the check fails and the thread is replaced.'),
  timeoutMs: z.int().min(1).max(600_000).describe("Longest one check may take, ms. Default 10,000; it never outlasts the run's own `timeoutMs` either."),
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
    timeoutMs: z.int().min(1).max(MAX_TIMER_MS).describe('Deadline of one call, retries included, ms. Default 30,000; past it: `TOOL_TIMEOUT`.'),
    maxResponseBytes: positiveInt().describe('Largest response body read, bytes. Default 10 MiB; a larger one fails the call.'),
    retries: z.int().min(0).max(10).describe('Retries of a call answered 429 or 503, after its `Retry-After`, within `timeoutMs`. Default 2.'),
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
  workspace: z.string().min(1).describe('Root of the built-in workspace tools; created at start. Default `./workspace`.'),
  dataDir: z.string().min(1).describe('Session logs and spill files. Default `./.ptc`.'),
  host: z.string().min(1).describe('Default `127.0.0.1`. Any non-loopback host requires a token.'),
  port: z.int().min(0).max(65535).describe('Default 7700; 0 picks a free port.'),
  token: tokenSchema.describe(
    'Bearer token required on every route but `/healthz` and `/readyz`, at least 16 characters. Default: none (loopback only). One token is one tenant.',
  ),
  runtime: z.enum(RUNTIME_KINDS).describe('Default `process` (isolates in child processes).'),
  mode: z.enum(CODE_MODE_KINDS).describe('Default `code`: only `run_code` is directly callable.'),
  typecheck: z.enum(TYPECHECK_MODES).describe(
    'Type-check programs against the typings first: `warn` logs diagnostics, `enforce` fails the run (kind `typecheck`). Default `off`.',
  ),
  typechecker: typecheckerSchema,
  limits: limitsSchema,
  toolLimits: toolLimitsSchema,
  pool: poolSchema,
  disabledTools: z.array(z.string()).describe('Tool names (built-in or `<server>__<tool>`) never registered. Default [].'),
  retention: group('Session logs: how long they are kept and how much each session and tenant may hold; an unset field keeps its default.', {
    maxAgeDays: positiveInt().describe("Session logs with no event for this many days are removed (checked hourly). Default 30. A paused run's journal is kept as long after it expired or its resumed run ended (it can be rolled back until then)."),
    maxSessionBytes: positiveInt().describe("Bytes one session's log may hold. Default 256 MiB; past it the session's new runs get 507 `STORAGE_QUOTA`."),
    maxTenantBytes: positiveInt().describe(
      "Bytes the session logs of one tenant (of everyone, without named tokens) may hold. Default 4 GiB; past it the tenant's new runs get 507 `STORAGE_QUOTA`.",
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
    'Headers and body of a request must have arrived within this, ms (runs themselves may take longer). Default 30,000; past it the connection is dropped (408).',
  ),
  maxConnections: positiveInt().describe('Open connections in total. Default 1,024; past it new ones are closed at once.'),
  maxConnectionsPerClient: positiveInt().describe(
    "Open connections per client IP. Default 128 (fetch pools keep about 1.3 sockets per concurrent request: 48 looping clients held 63); past it that client's new ones are closed at once.",
  ),
  bodyLimit: positiveInt().describe('Largest request body, bytes. Default 1 MiB; past it: 413.'),
  writeStallMs: z
    .int()
    .min(1)
    .max(MAX_TIMER_MS)
    .describe('A client that has taken none of the bytes sent to it for this long is disconnected, ms. Default 30,000.'),
  maxOutboundMiB: positiveInt().describe(
    'Bytes sent to clients and not yet taken by them, all connections together, MiB. Default 256; past it new runs, event pages and follows get 503 `UNDER_PRESSURE`.',
  ),
  maxConnectionOutboundMiB: positiveInt().describe(
    "Bytes one connection may hold sent but not taken, MiB. Default 8; a stream past it (a run's live events) is disconnected. Large bodies and live follows wait for the client instead.",
  ),
  rateLimit: group('Requests per client per window (ms). Default 6,000 per 60,000 ms; past it: 429 with Retry-After.', {
    max: positiveInt(),
    timeWindow: positiveInt(),
  }),
  maxConcurrentRunsPerClient: positiveInt().describe('Runs in flight per client. Default 32; past it: 429 with Retry-After.'),
  maxMcpSessionsPerTenant: positiveInt().describe(
    "MCP sessions (`/mcp`) one tenant keeps open. Default 256; past it that tenant's least recently used session with no call in flight is closed, or, when every one has a call in flight, the new one is refused (503).",
  ),
  shutdownGraceMs: z.int().min(0).describe('On SIGTERM/SIGINT, in-flight runs get this long to finish before they are cancelled, ms. Default 10,000.'),
  logLevel: logLevelSchema.describe('Default `info`. Code, arguments and values are never logged at info.'),
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
    .record(z.string().regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/), openApiSourceSchema)
    .describe('OpenAPI specs as tool sources: `{"name": {"spec", "baseUrl", "headers", …}}`; each operation becomes `<name>__<operationId>`. Default {}.'),
  typingsBudget: z
    .int()
    .min(0)
    .describe(
      "The MCP face (`ptc mcp`, `/mcp`): run_code's description carries the whole typings while they fit this many characters; past it, `search_tools` is offered and the description says to search first. Default 16,000.",
    ),
  databaseUrl: z
    .string()
    .min(1)
    .describe(
      'PostgreSQL connection string (`postgres://user:pass@host:5432/db`): session events, runs and heartbeats go to the database, shared by every replica. Default: none (JSONL files under `dataDir`).',
    ),
  databasePoolSize: z.int().min(1).max(1000).describe("Connections in this replica's PostgreSQL pool (plus one held for LISTEN). Default 10."),
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
    .describe('How long a paused run waits for a decision, ms. Default 86,400,000 (24 h); a later decision denies the call with reason `expired`.'),
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
  };
