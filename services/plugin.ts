/**
 * The service's routes as one Fastify plugin: `ptc serve` registers it on a
 * fresh instance, and a Node host registers it on its own instance with its
 * own registry and code mode:
 *
 *   const sessions = createSessionStore(createJsonlEventSink({ dir }));
 *   const registry = createToolRegistry({ eventSink: sessions });
 *   const logs = createLogRouter();
 *   const codeMode = createCodeMode({ registry, onLog: logs.onLog }); // registers run_code
 *   app.register(ptcPlugin, { registry, codeMode, sessions, logs });
 *
 * The plugin keeps Fastify's encapsulation (no `skip-override`): its strict
 * body validator (no coercion, unknown fields refused), its error handler and
 * its auth hook apply to its own routes only and never change the host's.
 * A `prefix` works as for any plugin.
 */
import { Ajv } from 'ajv';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { CodeMode } from '../src/code-mode/code-mode.ts';
import type { SandboxPoolStatus } from '../src/sandbox-runtime.ts';
import type { ToolRegistry } from '../src/tool.ts';
import { createBearerAuth } from './auth.ts';
import type { TenantToken } from './config-schema.ts';
import type { SessionSource, StatsSource } from './call-runner.ts';
import { sendError } from './http-errors.ts';
import type { LogRouter } from './log-router.ts';
import type { PtcMetrics } from './metrics.ts';
import { registerApprovalRoutes } from './routes-approvals.ts';
import { registerCallRoutes } from './routes-calls.ts';
import { registerInfoRoutes } from './routes-info.ts';
import { createRunTracker, type RunTracker } from './run-tracker.ts';
import { createMemoryRunLedger, type RunLedger } from './run-ledger.ts';
import { HEAVY_BODY_BYTES, createOutbound, type Outbound } from './outbound.ts';
import type { Retention } from './retention.ts';

/** What the routes need of a code mode (`createCodeMode(...)` has it). */
export interface PromptSource {
  typings(): Promise<string>;
  prompt(): Promise<string>;
}

/** What the durable-run routes need of a code mode (`createCodeMode(...)` has it); without them those routes answer 404. */
export type DurableControls = Pick<CodeMode, 'pending' | 'decide' | 'rollback' | 'durableStatus'>;

export interface PtcPluginOptions {
  registry: ToolRegistry;
  /** Its budgets fill each run's `stats` when it has `watchStats` (`createCodeMode(...)` does). */
  codeMode: PromptSource & Partial<DurableControls> & StatsSource;
  /**
   * Where session events are read (`GET /v1/sessions/:id/events`). A store
   * from `createSessionStore` (also the registry's event sink) gives live
   * SSE events and each call's `events` without re-reading the log.
   */
  sessions: SessionSource;
  /**
   * Live console lines for SSE `log` events: a router whose `onLog` was given
   * to `createCodeMode({ onLog })`. Default: a stream gets the logs at the end.
   */
  logs?: Pick<LogRouter, 'watch'>;
  /** Serves `GET /metrics` and counts runs and nested calls. Default: no metrics route. */
  metrics?: PtcMetrics;
  /**
   * Bearer token required on every route of the plugin except the probes;
   * or named tokens, one tenant each, whose sessions and runs are kept apart
   * (see services/tenancy.ts). Default: none.
   */
  auth?: { token: string } | { tokens: TenantToken[] };
  /** For `/readyz` (ready once `ready()` resolved). Default: always ready. */
  runtime?: { ready(): Promise<void>; status(): SandboxPoolStatus };
  /** Calls in flight, shared with the host for shutdown. Default: a tracker of the plugin's own. */
  runs?: RunTracker;
  /** Calls in flight per client (by IP) when `runs` is not given. Default 32; past it 429. */
  maxConcurrentRunsPerClient?: number;
  /** Body limit of the POST routes, bytes. Default: the instance's (Fastify: 1 MiB); past it 413. */
  bodyLimit?: number;
  /** Where runs are recorded for `GET /v1/runs/:callId` and cross-replica cancels. Default: this plugin's memory (recent runs). */
  ledger?: RunLedger;
  /** False while the shared database is unreachable: new calls get 503 `DATABASE_UNAVAILABLE` at once. Default: always available. */
  databaseAvailable?: () => boolean;
  /** Live follow of a session (`GET /v1/sessions/:id/events` as SSE): `onWake` whenever the session may have new events. Default: no live follow (406). */
  followSession?: (sessionId: string, onWake: () => void) => () => void;
  /**
   * Folders this process must be able to write (the workspace, the data folder): `/readyz` fails
   * while one is missing or not writable, named by `name` (never its path). Default: none.
   */
  writableFolders?: readonly { name: string; path: string }[];
  /** While true, new calls get 503 and `/readyz` fails. Default: never. */
  isShuttingDown?: () => boolean;
  /** Expiry and quotas of session logs: new runs of a session or tenant at its quota get 507 `STORAGE_QUOTA`. Default: none. */
  retention?: Retention;
  /** Bounds on what clients have not read yet (services/outbound.ts). Default: `createOutbound()` (30 s stall, 8 MiB a connection, 256 MiB in all). */
  outbound?: Outbound;
}

const strictBodies = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: false, strict: false });
const coercedParams = new Ajv({ coerceTypes: true, useDefaults: true, removeAdditional: false, allErrors: false, strict: false });

export const ptcPlugin: FastifyPluginAsync<PtcPluginOptions> = async (app: FastifyInstance, options) => {
  const runs = options.runs ?? createRunTracker({ maxPerClient: options.maxConcurrentRunsPerClient });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strictBodies : coercedParams).compile(schema));
  app.setErrorHandler(sendError);
  if (options.auth !== undefined) app.addHook('onRequest', createBearerAuth('tokens' in options.auth ? options.auth.tokens : options.auth.token));
  const ledger = options.ledger ?? createMemoryRunLedger();
  const outbound = options.outbound ?? createOutbound();
  // A large body goes out as the client takes it, never handed to the socket whole.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (!(typeof payload === 'string' || Buffer.isBuffer(payload)) || payload.length <= HEAVY_BODY_BYTES) return payload;
    reply.header('content-length', Buffer.byteLength(payload));
    return outbound.body(reply.raw, payload);
  });
  registerCallRoutes(app, { ...options, runs, ledger, outbound });
  registerApprovalRoutes(app, options);
  registerInfoRoutes(app, { ...options, outbound });
};
