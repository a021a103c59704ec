/**
 * The MCP bridge (docs/architecture.md, "MCP: the bridge and the faces"): MCP servers' tools as canonical tools.
 */
export { connectMcpServers, mcpToolSources } from './bridge.ts';
export { mcpToolSource } from './mcp-source.ts';
export type { McpToolSource, McpToolSourceOptions } from './mcp-source.ts';
export type { McpBridge, McpBridgeOptions } from './bridge.ts';
export { validateMcpServersConfig } from './config.ts';
export type { McpConfigCheck, McpHttpServerConfig, McpServerConfig, McpServersConfig, McpStdioServerConfig } from './config.ts';
export type { McpReconnectOptions, McpServerState, McpServerStatus } from './connection.ts';
export type { McpLogFn, McpLogger } from './logger.ts';
export { createMcpToolDefinition, mcpOutputSchema, mcpToolName } from './mcp-tool.ts';
export type { McpCallTool, McpOutputSchemaStatus, McpToolOptions } from './mcp-tool.ts';
export type { McpToolValue } from './render.ts';
