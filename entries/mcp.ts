/**
 * `ptc-executor/mcp`: Model Context Protocol. The client bridge registers the
 * tools of MCP servers (stdio or Streamable HTTP) on a registry. Loads the
 * MCP SDK.
 */
export { connectMcpServers, validateMcpServersConfig } from '../src/mcp/index.ts';
export type {
  McpBridge,
  McpBridgeOptions,
  McpConfigCheck,
  McpServerConfig,
  McpServersConfig,
  McpStdioServerConfig,
  McpHttpServerConfig,
  McpServerStatus,
  McpServerState,
  McpLogger,
  McpLogFn,
  McpToolValue,
} from '../src/mcp/index.ts';
