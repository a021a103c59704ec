/**
 * The executor a configuration describes, without HTTP: registry, session
 * store, built-in tools, MCP servers, sandbox runtime and code mode. The
 * server and the CLI commands both build on it.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createCodeModeCore, type CodeMode } from '../src/code-mode/code-mode.ts';
import { createJsonlEventSink } from '../src/event-sinks/jsonl-sink.ts';
import { createMemoryEventSink } from '../src/event-sinks/memory-sink.ts';
import { connectMcpServers, type McpBridge, type McpLogger } from '../src/mcp/index.ts';
import { createToolRegistry } from '../src/registry.ts';
import type { SandboxRuntime } from '../src/sandbox-runtime.ts';
import type { ToolRegistry } from '../src/tool.ts';
import { createBuiltinTools } from '../src/tools/index.ts';
import { createInProcessRuntime } from '../sandbox/in-process-runtime.ts';
import { createProcessRuntime } from '../sandbox/process/process-runtime.ts';
import { createTypingsService } from '../typings/service.ts';
import type { PtcConfig } from './config.ts';
import { createLogRouter, type LogRouter } from './log-router.ts';
import { createSessionStore, type SessionStore } from './session-store.ts';

export interface PtcCore {
  registry: ToolRegistry;
  sessions: SessionStore;
  runtime: SandboxRuntime;
  codeMode: CodeMode;
  /** Live console lines of each run, by callId. */
  logs: LogRouter;
  mcp: McpBridge | undefined;
  /** Flushes events, disconnects MCP servers, closes the code mode and the sandbox. */
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
  const sink = durable ? createJsonlEventSink({ dir: path.join(config.dataDir, 'sessions') }) : memoryReader();
  const sessions = createSessionStore(sink);
  const registry = createToolRegistry({
    eventSink: sessions,
    spill: config.spill === undefined || !durable ? undefined : { dir: path.join(config.dataDir, 'spill'), shownAs: '<data dir>/spill', maxInlineBytes: config.spill.maxInlineBytes },
  });
  const disabled = new Set(config.disabledTools);
  for (const tool of createBuiltinTools({ workspace: config.workspace })) {
    if (!disabled.has(tool.name)) registry.register(tool);
  }
  const runtime = createRuntime(config, options.sandbox !== false);
  const logs = createLogRouter();
  const codeMode = createCodeModeCore({
    registry,
    runtime,
    typings: createTypingsService({ promptLimits: { ...config.limits } }),
    limits: config.limits,
    mode: config.mode,
    typecheck: config.typecheck,
    onLog: logs.onLog,
  });
  registry.register(codeMode.runCodeTool);
  let mcp: McpBridge | undefined;
  if (Object.keys(config.mcpServers).length > 0) {
    try {
      mcp = await connectMcpServers({ servers: config.mcpServers, registry: withoutDisabled(registry, disabled), logger: options.logger });
    } catch (error) {
      await runtime.close();
      throw error;
    }
  }
  let closing: Promise<void> | undefined;
  return {
    registry,
    sessions,
    runtime,
    codeMode,
    logs,
    mcp,
    close() {
      closing ??= (async () => {
        await mcp?.close();
        // The JSONL sink's close flushes every session (each call already awaited its own flush).
        if ('close' in sink) await sink.close();
        await codeMode.close();
        await runtime.close();
      })();
      return closing;
    },
  };
}

function createRuntime(config: PtcConfig, sandbox: boolean): SandboxRuntime {
  if (!sandbox) return createInProcessRuntime({ warmPoolSize: 0 });
  // Pooled isolates get the configured heap, or every run would make its own.
  const warmPoolMemoryMiB = config.limits.memoryMiB ?? 128;
  if (config.runtime === 'process') return createProcessRuntime({ ...config.pool, warmPoolMemoryMiB });
  const { memoryBudgetMiB, runReserveMiB, maxActiveRuns, queueLimit, queueTimeoutMs } = config.pool;
  return createInProcessRuntime({ warmPoolMemoryMiB, memoryBudgetMiB, runReserveMiB, maxActiveRuns, queueLimit, queueTimeoutMs });
}

function memoryReader() {
  const sink = createMemoryEventSink();
  return {
    append: sink.append,
    read: (sessionId: string, options?: { after?: number }) => sink.events(sessionId).filter((event) => event.seq > (options?.after ?? 0)),
  };
}

/** The registry as MCP servers see it: disabled tool names are silently not registered. */
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
