/**
 * The tool sources a configuration names, in one list: tool modules, OpenAPI
 * specs and MCP servers. The core starts them together; `ptc serve`,
 * `ptc mcp`, `ptc run`, `ptc typings` and `ptc tools` all come through it.
 */
import { mcpToolSources, type McpLogger } from '../src/mcp/index.ts';
import { openApiToolSource } from '../src/openapi/index.ts';
import type { ToolSource } from '../src/tool-source.ts';
import type { PtcConfig } from './config.ts';
import { toolModuleSource } from './tool-modules.ts';

export function configuredToolSources(config: PtcConfig, logger: McpLogger | undefined): ToolSource[] {
  return [
    ...config.tools.map((specifier) => toolModuleSource(specifier, config.configDir)),
    ...Object.entries(config.openapi).map(([name, source]) => openApiToolSource(name, source)),
    ...mcpToolSources({ servers: config.mcpServers, ...(logger === undefined ? {} : { logger }) }),
  ];
}
