/**
 * OpenAPI specs as a tool source: one canonical tool per operation, requests made on the host.
 */
export { openApiTools, openApiToolSource } from './openapi-tools.ts';
export type { OpenApiTextValue, OpenApiToolsOptions } from './openapi-tools.ts';
export { OPENAPI_DEFAULTS } from './config.ts';
export type { OpenApiSourceConfig } from './config.ts';
