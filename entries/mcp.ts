/**
 * `ptc-executor/mcp`: Model Context Protocol. The client bridge registers the
 * tools of MCP servers (stdio or Streamable HTTP) on a registry; the server
 * face serves Code Mode to MCP clients. Loads the
 * MCP SDK.
 */
export { connectMcpServers, mcpToolSources, validateMcpServersConfig } from '../src/mcp/index.ts';
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
  McpToolSource,
} from '../src/mcp/index.ts';

// The server face: Code Mode (run_code, and search_tools past the typings budget) as an MCP server.
export { createCodeModeMcpServer } from '../services/mcp-embed.ts';
export type { CodeModeMcpServer, CodeModeMcpServerOptions } from '../services/mcp-embed.ts';
export type { McpDurableOptions } from '../services/mcp-server.ts';
