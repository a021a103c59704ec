/**
 * One OpenAPI source's configuration (`openapi: { <name>: {...} }` in the
 * service's config, or `openApiTools(...)` in the library).
 */

/** HTTP methods an operation can have. */
export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export interface OpenApiSourceConfig {
  /** The spec: a file path or an http(s) URL; JSON or YAML; OpenAPI 3.0, 3.1 or Swagger 2.0. */
  spec: string;
  /** Where requests go. Default: the spec's first server (3.x) or `schemes://host/basePath` (2.0). */
  baseUrl?: string;
  /**
   * Sent with every request, after the operation's own header parameters (so
   * a program cannot replace them). Values may hold `${env:NAME}`, read from
   * the host's environment at start. Never shown to programs.
   */
  headers?: Record<string, string>;
  /** Only operations matching one of these globs (over the operationId, or `METHOD /path`). Default: all. */
  include?: string[];
  /** Operations matching one of these globs are left out. Default: none. */
  exclude?: string[];
  /** Deadline of one call (retries included), ms. Default `OPENAPI_DEFAULTS.timeoutMs`. */
  timeoutMs?: number;
  /** Largest response body read, bytes. Default `OPENAPI_DEFAULTS.maxResponseBytes`; a larger one fails the call. */
  maxResponseBytes?: number;
  /** Retries of a call answered 429 or 503 (after `Retry-After`, within `timeoutMs`). Default `OPENAPI_DEFAULTS.retries`. */
  retries?: number;
  /**
   * Operations that need approval before they run (globs as in `include`,
   * or `{ methods: ["DELETE", "POST"] }`): their definitions carry
   * `needsApproval: true`. Default: none.
   */
  approvals?: string[] | { methods: string[] };
}

export const OPENAPI_DEFAULTS = {
  timeoutMs: 30_000,
  maxResponseBytes: 10 * 1024 * 1024,
  retries: 2,
} as const;

/** Letters, digits, `-` and single `_`: the name prefixes tool names as `<name>__<operation>`. */
export const SOURCE_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;
