/**
 * `ptc-executor/service`: the HTTP service. The Fastify plugin a Node host
 * registers on its own instance, with the parts it takes, and the ready-made
 * server `ptc serve` runs. Loads Fastify, prom-client and the MCP SDK.
 */
export { ptcPlugin } from '../services/plugin.ts';
export type { PtcPluginOptions, PromptSource } from '../services/plugin.ts';
export { createSessionStore } from '../services/session-store.ts';
export type { SessionStore, SessionEventReader, SessionStoreOptions } from '../services/session-store.ts';
export { createLogRouter } from '../services/log-router.ts';
export type { LogRouter } from '../services/log-router.ts';
export { createMetrics } from '../services/metrics.ts';
export type { PtcMetrics, MetricsOptions } from '../services/metrics.ts';
export { createRunTracker } from '../services/run-tracker.ts';
export type { RunTracker, RunTrackerOptions } from '../services/run-tracker.ts';
export { createOutbound, DEFAULT_OUTBOUND_LIMITS } from '../services/outbound.ts';
export type { Outbound, OutboundLimits } from '../services/outbound.ts';
export { createRetention, DEFAULT_RETENTION } from '../services/retention.ts';
export type { Retention, RetentionLimits, SessionUsage } from '../services/retention.ts';
export { createJsonlSessionUsage } from '../services/session-usage-jsonl.ts';
export { loadConfig, ConfigError } from '../services/config.ts';
export type { PtcConfig, ConfigFlags, LoadConfigOptions } from '../services/config.ts';
export { createServer } from '../services/server.ts';
export { useStrictUtf8Json } from '../services/utf8-json.ts';
export type { PtcServer, ServerOptions } from '../services/server.ts';
// The V8 optimization filters `ptc` opts into, for a host that owns its process.
export { GUEST_FREEZE_FLAGS, keepGuestFreezeUnoptimized } from '../sandbox/guest-tiering.ts';
