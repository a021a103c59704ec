/**
 * The executor a configuration describes, without HTTP: registry, session
 * store, built-in tools, tool sources (modules, OpenAPI specs, MCP servers),
 * sandbox runtime and code mode. The
 * server and the CLI commands both build on it.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createCodeMode, type ComposedCodeMode } from '../compose/code-mode.ts';
import { createFileJournalStore } from '../src/code-mode/file-journal-store.ts';
import { createInPlaceApprovers, type InPlaceApprovers } from '../src/code-mode/in-place-approval.ts';
import type { JournalStore } from '../src/code-mode/journal-store.ts';
import { createJsonlEventSink } from '../src/event-sinks/jsonl-sink.ts';
import { createMemoryEventSink } from '../src/event-sinks/memory-sink.ts';
import type { McpLogger } from '../src/mcp/index.ts';
import { createToolRegistry } from '../src/registry.ts';
import type { SandboxRuntime } from '../src/sandbox-runtime.ts';
import type { ToolRegistry } from '../src/tool.ts';
import { startToolSources, type ToolSources } from '../src/tool-source.ts';
import { createBuiltinTools } from '../src/tools/index.ts';
import type { PtcConfig } from './config.ts';
import { createLogRouter, type LogRouter } from './log-router.ts';
import { createSessionStore, type SessionStore } from './session-store.ts';
import { tenantOfStoredId } from './tenancy.ts';
import { configuredToolSources } from './tool-sources.ts';
import type { Database } from './postgres/database.ts';
import type { PostgresEventSink } from './postgres/event-sink.ts';
import { createRetention, DAY_MS, DEFAULT_RETENTION, type Retention, type SessionUsage } from './retention.ts';
import { createJsonlSessionUsage } from './session-usage-jsonl.ts';

export interface PtcCore {
  registry: ToolRegistry;
  sessions: SessionStore;
  runtime: SandboxRuntime;
  codeMode: ComposedCodeMode;
  /** Live console lines of each run, by callId. */
  logs: LogRouter;
  /** Tool modules, OpenAPI specs and MCP servers, with their status. */
  sources: ToolSources;
  /** Where a face registers a run's in-place approver (an MCP client with elicitation). */
  approvers: InPlaceApprovers;
  /** Whether any tool may pause a run now (a `needsApproval` definition or an `approvals` rule). */
  mayPause(): boolean;
  /** The shared database when `databaseUrl` is set on a durable core (the server); its event sink holds the session logs. */
  database?: SharedDatabase;
  /** Expiry and quotas of the session logs (`config.retention`), on a durable core. */
  retention?: Retention;
  /** Flushes events, closes the tool sources (MCP servers included), the code mode and the sandbox. */
  close(): Promise<void>;
}

export interface CoreOptions {
  /** Keep session events as JSONL under `<dataDir>/sessions` (the server). Default false: in memory. */
  durable?: boolean;
  /** Start sandbox isolates or children (false for commands that only print typings). Default true. */
  sandbox?: boolean;
  logger?: McpLogger;
}

export async function createCore(config: PtcConfig, options: CoreOptions = {}): Promise<PtcCore> {
  mkdirSync(config.workspace, { recursive: true });
  const durable = options.durable === true;
  if (durable) mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // With a database URL, session events live in PostgreSQL, shared by every replica; JSONL stays the embedded default.
  const database = durable && config.databaseUrl !== undefined ? await openSharedDatabase(config, options.logger) : undefined;
  const sessionsDir = path.join(config.dataDir, 'sessions');
  const jsonl = database === undefined && durable ? createJsonlEventSink({ dir: sessionsDir, maxOpenFiles: config.limits.maxOpenSessionFiles }) : undefined;
  const sink = database?.events ?? jsonl ?? createMemoryEventSink();
  const usage = database?.usage ?? (jsonl === undefined ? undefined : createJsonlSessionUsage(sessionsDir, jsonl));
  const retention = usage === undefined ? undefined : createRetention(usage, config.retention, (message, error) => options.logger?.warn({ err: error }, message));
  const sessions = createSessionStore(sink, {
    caps: {
      maxEventContentBytes: config.limits.maxEventContentBytes,
      maxRunEventBytes: config.limits.maxRunEventBytes,
      maxEventArgumentBytes: config.limits.maxEventArgumentBytes,
    },
  });
  const registry = createToolRegistry({
    eventSink: sessions,
    spill:
      config.spill === undefined || !durable
        ? undefined
        : database !== undefined
          ? // Shared by every replica: the text goes to the ptc_spill table, which the notice names.
            { dir: path.join(config.dataDir, 'spill'), shownAs: 'ptc_spill', maxInlineBytes: config.spill.maxInlineBytes, write: database.spill }
          : { dir: path.join(config.dataDir, 'spill'), shownAs: '<data dir>/spill', maxInlineBytes: config.spill.maxInlineBytes },
  });
  const disabled = new Set(config.disabledTools);
  // With named tokens, shared workers (search, type-check) serve tenants in turn.
  const tenantOf = tenantOfStoredId(config.tenants.map((tenant) => tenant.name));
  for (const tool of createBuiltinTools({ workspace: config.workspace, limits: config.toolLimits, tenantOf })) {
    if (!disabled.has(tool.name)) registry.register(tool);
  }
  const logs = createLogRouter();
  const approvers = createInPlaceApprovers();
  // The composition root the library's createCodeMode uses too; it registers run_code.
  const codeMode = createCodeMode({
    registry,
    runtime: config.runtime,
    pool: config.pool,
    typechecker: { ...config.typechecker, tenantOf },
    warm: options.sandbox !== false,
    limits: config.limits,
    mode: config.mode,
    typecheck: config.typecheck,
    onLog: logs.onLog,
    approvals: config.approvals,
    approvalTtlMs: config.approvalTtlMs,
    // A finished run can be rolled back, and an expired one decided, as long as its session log is kept.
    journalRetentionMs: (config.retention.maxAgeDays ?? DEFAULT_RETENTION.maxAgeDays) * DAY_MS,
    // The server keeps paused runs in its data folder (or, shared by every replica, in the database), so they survive a
    // restart; commands that never serve keep them in memory.
    ...(database !== undefined ? { journal: database.journals } : durable ? { journal: createFileJournalStore({ dir: path.join(config.dataDir, 'journals') }) } : {}),
    // An MCP client with elicitation answers its runs' gated calls in place; other runs pause.
    approveInPlace: approvers.approve,
  });
  const runtime = codeMode.runtime;
  // The service starts its sandbox with the process, not on the first request (its pool fills
  // in the background; /readyz says when it is ready).
  if (options.sandbox !== false) {
    try {
      await codeMode.start();
    } catch (error) {
      await codeMode.close();
      await database?.db.close();
      throw error;
    }
  }
  let sources: ToolSources;
  try {
    sources = await startToolSources(configuredToolSources(config, options.logger), withoutDisabled(registry, disabled));
  } catch (error) {
    await codeMode.close();
    await database?.db.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    registry,
    sessions,
    runtime,
    codeMode,
    logs,
    sources,
    approvers,
    mayPause: () => config.approvals.length > 0 || registry.schemas().some((schema) => schema.mayPause === true),
    ...(database === undefined ? {} : { database }),
    ...(retention === undefined ? {} : { retention }),
    close() {
      closing ??= (async () => {
        retention?.close();
        await sources.close();
        // The JSONL sink's close flushes every session (each call already awaited its own flush).
        if ('close' in sink) await sink.close();
        // Closes the runtime too: code mode made it.
        await codeMode.close();
        await database?.db.close();
      })();
      return closing;
    },
  };
}

export interface SharedDatabase {
  db: Database;
  events: PostgresEventSink;
  spill(sessionId: string, callId: string, bytes: Uint8Array): Promise<void>;
  usage: SessionUsage;
  /** Paused runs' journals, shared by every replica. */
  journals: JournalStore;
}

/** Loaded only when a database URL is set: the embedded default never loads `pg`. */
async function openSharedDatabase(config: PtcConfig, logger: McpLogger | undefined): Promise<SharedDatabase> {
  const [{ openDatabase }, { createPostgresEventSink }, { createSpillWriter }, { createPostgresSessionUsage }, { createPostgresJournalStore }] = await Promise.all([
    import('./postgres/database.ts'),
    import('./postgres/event-sink.ts'),
    import('./postgres/spill-store.ts'),
    import('./postgres/usage.ts'),
    import('./postgres/journal-store.ts'),
  ]);
  const db = await openDatabase({
    url: config.databaseUrl!,
    poolSize: config.databasePoolSize,
    onWarning: (message, error) => logger?.warn({ err: error }, message),
  });
  return { db, events: createPostgresEventSink(db), spill: createSpillWriter(db), usage: createPostgresSessionUsage(db), journals: createPostgresJournalStore(db) };
}

/** The registry as tool sources see it: disabled tool names are silently not registered. */
function withoutDisabled(registry: ToolRegistry, disabled: ReadonlySet<string>): ToolRegistry {
  if (disabled.size === 0) return registry;
  return {
    register: (definition) => (disabled.has(definition.name) ? () => undefined : registry.register(definition)),
    schemas: () => registry.schemas(),
    get: (name) => registry.get(name),
    hook: (kind, hook) => registry.hook(kind, hook),
    dispatch: (request) => registry.dispatch(request),
    onChange: (listener) => registry.onChange(listener),
  };
}
