/**
 * One MCP server as a {@link ToolSource}: its connection is made on `start`
 * and follows the server (reconnects, tool list changes) until `close`.
 */
import type { ToolSource, ToolSourceState, ToolSourceStatus } from '../tool-source.ts';
import type { McpServerConfig } from './config.ts';
import { McpConnection, type McpReconnectOptions, type McpServerState, type McpServerStatus } from './connection.ts';
import type { McpLogger } from './logger.ts';

export interface McpToolSourceOptions {
  /** Deadline of one connection attempt, ms. */
  connectTimeoutMs: number;
  reconnect: Required<McpReconnectOptions>;
  logger: McpLogger;
  /** Called with the server's status after every change. */
  onChange?(status: McpServerStatus): void;
}

export interface McpToolSource extends ToolSource {
  /** The MCP-specific status (transport, skipped tools, attempts). */
  mcpStatus(): McpServerStatus;
}

const STATES: Readonly<Record<McpServerState, ToolSourceState>> = {
  connecting: 'starting',
  connected: 'ready',
  reconnecting: 'degraded',
  down: 'down',
  disabled: 'disabled',
  closed: 'closed',
};

export function mcpToolSource(name: string, config: McpServerConfig, options: McpToolSourceOptions): McpToolSource {
  let connection: McpConnection | undefined;
  const mcpStatus = (): McpServerStatus =>
    connection?.status() ?? {
      name,
      transport: config.url !== undefined ? 'http' : 'stdio',
      state: config.disabled === true ? 'disabled' : 'connecting',
      tools: [],
      skippedTools: [],
      unvalidatedOutputs: [],
      failedAttempts: 0,
    };
  return {
    name,
    kind: 'mcp',
    async start(registry) {
      connection ??= new McpConnection({
        name,
        config,
        registry,
        connectTimeoutMs: options.connectTimeoutMs,
        reconnect: options.reconnect,
        logger: options.logger,
        onChange: (status) => options.onChange?.(status),
      });
      // Never rejects: a server that cannot be reached is retried and reported in status().
      await connection.start();
    },
    tools: () => mcpStatus().tools,
    mcpStatus,
    status(): ToolSourceStatus {
      const status = mcpStatus();
      return {
        name,
        kind: 'mcp',
        state: STATES[status.state],
        tools: status.tools,
        ...(status.lastError === undefined ? {} : { error: status.lastError }),
      };
    },
    async close() {
      await connection?.close();
    },
  };
}
