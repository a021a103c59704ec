/**
 * `createCodeModeMcpServer`: Code Mode as an MCP server for a host that has
 * its own registry and code mode, in one call. Connect `server` to any SDK
 * transport (stdio, Streamable HTTP, in-memory):
 *
 *   const sessions = createSessionStore(createMemoryEventSink());
 *   const registry = createToolRegistry({ eventSink: sessions });
 *   const codeMode = createCodeMode({ registry }); // registers run_code
 *   const mcp = createCodeModeMcpServer({ registry, codeMode, sessions });
 *   await mcp.server.connect(new StdioServerTransport());
 */
import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ToolRegistry } from '../src/tool.ts';
import type { CodeMode } from '../src/code-mode/code-mode.ts';
import type { PromptLimits } from '../typings/prompt.ts';
import type { SessionSource, StatsSource } from './call-runner.ts';
import type { LogRouter } from './log-router.ts';
import { createMcpCatalog } from './mcp-catalog.ts';
import { createPtcMcpServer, type McpDurableOptions } from './mcp-server.ts';
import { createRunTracker, type RunTracker } from './run-tracker.ts';

export interface CodeModeMcpServerOptions {
  registry: ToolRegistry;
  /** What the server needs of a code mode: its typings and the schemas they are made from, and (for `structuredContent.stats`) each run's budgets. */
  codeMode: Pick<CodeMode, 'typings' | 'toolSchemas'> & StatsSource;
  /** Where run events are read; a store from `createSessionStore` also gives live progress. */
  sessions: SessionSource;
  logs?: Pick<LogRouter, 'watch'>;
  /** run_code's description carries the whole typings up to this many characters; past it search_tools is offered. Default 16,000. */
  typingsBudget?: number;
  /** The run limits the prompt states. Default: the code mode defaults. */
  promptLimits?: Partial<PromptLimits>;
  /** Session id of the durable log for this server's runs. Default `mcp-<uuid>`. */
  sessionId?: string;
  /** Calls in flight. Default: a tracker of its own (32 runs at once). */
  runs?: RunTracker;
  /**
   * Durable runs: `{ codeMode, mayPause, approvers? }` lists `decide_run` while `mayPause()` says
   * some tool may pause, and with `approvers` (the code mode's `approveInPlace` being
   * `approvers.approve`) asks clients with elicitation in place. Default none: gated calls pause.
   */
  durable?: McpDurableOptions;
}

export interface CodeModeMcpServer {
  readonly server: Server;
  /** Waits for calls being answered, then closes the server and stops following the catalogue. */
  close(): Promise<void>;
}

export function createCodeModeMcpServer(options: CodeModeMcpServerOptions): CodeModeMcpServer {
  const catalog = createMcpCatalog({
    registry: options.registry,
    typings: () => options.codeMode.typings(),
    schemas: () => options.codeMode.toolSchemas(),
    typingsBudget: options.typingsBudget,
    promptLimits: options.promptLimits,
  });
  const runs = options.runs ?? createRunTracker();
  const mcp = createPtcMcpServer({
    registry: options.registry,
    sessions: options.sessions,
    logs: options.logs,
    codeMode: options.codeMode,
    catalog,
    runs,
    sessionId: options.sessionId ?? `mcp-${randomUUID()}`,
    ...(options.durable === undefined ? {} : { durable: options.durable }),
  });
  return {
    server: mcp.server,
    async close() {
      await mcp.idle();
      mcp.dispose();
      catalog.close();
      await mcp.server.close();
    },
  };
}
