/**
 * `connectMcpServers`: connects every configured MCP server in parallel and
 * keeps each one's tools registered as `<server>__<tool>` until `close()`.
 */
import type { ToolRegistry } from '../tool.ts';
import { validateMcpServersConfig, type McpServersConfig } from './config.ts';
import type { McpReconnectOptions, McpServerStatus } from './connection.ts';
import { silentLogger, type McpLogger } from './logger.ts';
import { mcpToolSource, type McpToolSource } from './mcp-source.ts';

export interface McpBridgeOptions {
  /** The `mcpServers` config; checked with `validateMcpServersConfig` (invalid config throws, listing every problem). */
  servers: McpServersConfig;
  /** Where the bridged tools are registered (and disposed on close or when a server drops them). */
  registry: ToolRegistry;
  /**
   * Deadline for one connection attempt (spawn or reach the server,
   * initialize, list its tools), in ms. Default 10,000. A server that misses
   * it is reported in `status()` and retried in the background; the others
   * are not held up.
   */
  connectTimeoutMs?: number;
  /** Backoff of reconnection attempts (after a failed start-up or a lost server). */
  reconnect?: McpReconnectOptions;
  /** Default: silent. */
  logger?: McpLogger;
}

export interface McpBridge {
  /** One entry per configured server, in config order. */
  status(): McpServerStatus[];
  /** Called with a server's new status after every change (state, tool set). Returns unsubscribe. */
  onChange(listener: (status: McpServerStatus) => void): () => void;
  /** Disposes every bridged tool, stops retries, closes connections and stops stdio children. */
  close(): Promise<void>;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** Resolves once every server has connected or failed its first attempt (bounded by `connectTimeoutMs`). */
export async function connectMcpServers(options: McpBridgeOptions): Promise<McpBridge> {
  const listeners = new Set<(status: McpServerStatus) => void>();
  const sources = mcpToolSources(options, (status) => {
    for (const listener of listeners) listener(status);
  });
  await Promise.all(sources.map((source) => source.start(options.registry)));
  let closing: Promise<void> | undefined;
  return {
    status: () => sources.map((source) => source.mcpStatus()),
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      closing ??= Promise.all(sources.map((source) => source.close())).then(() => listeners.clear());
      return closing;
    },
  };
}

/**
 * One tool source per configured server, not yet started (the service starts
 * them with its other sources). Throws listing every problem of an invalid config.
 */
export function mcpToolSources(
  options: Omit<McpBridgeOptions, 'registry'>,
  onChange?: (status: McpServerStatus) => void,
): McpToolSource[] {
  const check = validateMcpServersConfig(options.servers);
  if (!check.ok) throw new Error(`invalid MCP server config:\n- ${check.errors.join('\n- ')}`);
  const reconnect: Required<McpReconnectOptions> = {
    initialDelayMs: options.reconnect?.initialDelayMs ?? 500,
    maxDelayMs: options.reconnect?.maxDelayMs ?? 30_000,
    maxAttempts: options.reconnect?.maxAttempts ?? Number.POSITIVE_INFINITY,
  };
  const logger = options.logger ?? silentLogger;
  return Object.entries(check.servers).map(([name, config]) =>
    mcpToolSource(name, config, {
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      reconnect,
      logger,
      ...(onChange === undefined ? {} : { onChange }),
    }),
  );
}
