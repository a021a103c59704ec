/**
 * The service's own defaults, each written once: the config loader fills them
 * in, the config schema's descriptions (and so docs/ptc.config.schema.json)
 * and the CLI's help state them. The sandbox's, the tools' and the other
 * layers' defaults live beside their code; the schema reads those too.
 */
import type { CodeModeKind, RuntimeKind, TypecheckMode } from '../src/code-mode/choices.ts';

export const DEFAULTS = {
  workspace: './workspace',
  dataDir: './.ptc',
  host: '127.0.0.1',
  port: 7700,
  runtime: 'process' as RuntimeKind,
  mode: 'code' as CodeModeKind,
  typecheck: 'off' as TypecheckMode,
  bodyLimit: 1024 * 1024,
  rateLimit: { max: 6000, timeWindow: 60_000 },
  maxConcurrentRunsPerClient: 32,
  maxMcpSessionsPerTenant: 256,
  shutdownGraceMs: 10_000,
  shutdownMarginMs: 10_000,
  receiveTimeoutMs: 30_000,
  maxConnections: 1024,
  maxConnectionsPerClient: 128,
  writeStallMs: 30_000,
  maxOutboundMiB: 256,
  maxConnectionOutboundMiB: 8,
  logLevel: 'info',
  typingsBudget: 16_000,
  databasePoolSize: 10,
} as const;

/** Levels of arrays and objects a JSON request body may nest (fixed; a program nests deeper only inside its code, a string). */
export const MAX_BODY_DEPTH = 256;
