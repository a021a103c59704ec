/**
 * `ptc-executor/openapi`: an OpenAPI 3.0/3.1 or Swagger 2.0 spec as tool
 * definitions (`openApiTools`), and as a tool source (`openApiToolSource`).
 */
export { openApiTools, openApiToolSource, OPENAPI_DEFAULTS } from '../src/openapi/index.ts';
export type { OpenApiSourceConfig, OpenApiTextValue, OpenApiToolsOptions } from '../src/openapi/index.ts';
export { startToolSources, staticToolSource, ToolSourceError } from '../src/tool-source.ts';
export type { ToolSource, ToolSources, ToolSourceState, ToolSourceStatus } from '../src/tool-source.ts';
