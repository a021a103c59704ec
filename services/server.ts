/**
 * `createServer(config)`: the plugin on a fresh Fastify instance, with what a
 * production service adds around it: bearer auth, body limit, rate limit,
 * per-client concurrency cap, load shedding, OpenAPI, pino logs with the
 * authorization header redacted, and a graceful close.
 */
import swagger from '@fastify/swagger';
import rateLimit from '@fastify/rate-limit';
import underPressure, { type FastifyUnderPressureOptions } from '@fastify/under-pressure';
import { maxHeaderSize } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ProbeRouteConfig } from './auth.ts';
import { createBearerAuth } from './auth.ts';
import { clientKeyOf } from './tenancy.ts';
import { ConfigError, assertWorkspaceApart, isLoopbackHost, type PtcConfig } from './config.ts';
import { capConnections, createHostCheck, lingerOnClose, refuseLongParams, refuseOverCap, type ConnectionGate } from './edge.ts';
import { createCore, type CoreOptions, type PtcCore } from './core.ts';
import { HttpError, answerClientError, errorBody, sendError, type ErrorBody } from './http-errors.ts';
import { createMcpCatalog } from './mcp-catalog.ts';
import { registerMcpRoutes, type McpRoutes } from './mcp-http.ts';
import { createMetrics } from './metrics.ts';
import { registerPlayground } from './playground.ts';
import { ptcPlugin } from './plugin.ts';
import { useStrictUtf8Json } from './utf8-json.ts';
import { createRunTracker, type RunTracker } from './run-tracker.ts';
import { createOutbound } from './outbound.ts';
import { startServiceTracing, type ServiceTracing } from './otel-sdk.ts';
import { createMemoryRunLedger, replicaName, type RunLedger } from './run-ledger.ts';

const MiB = 1024 * 1024;

/** The longest run a client can ask for, ms (code mode's default `maxTimeoutMs`). */
export const MAX_RUN_MS = 600_000;

/** Load shedding (503 on event-loop lag over 1 s) starts this long after listen, ms. */
const SHEDDING_WARMUP_MS = 5_000;

export interface PtcServer {
  readonly app: FastifyInstance;
  readonly core: PtcCore;
  readonly config: PtcConfig;
  /** Binds host:port; resolves to the address, such as `http://127.0.0.1:7700`. */
  listen(): Promise<string>;
  /**
   * Graceful close: stop accepting, give in-flight calls `shutdownGraceMs`
   * to finish, then cancel the rest, flush every event, close MCP servers
   * and the sandbox. Idempotent.
   */
  close(): Promise<void>;
  /** The step of {@link close} under way (`runs`, `cluster`, `mcp`, `http`, `sandbox`, `tracing`), or undefined. */
  closingStep(): string | undefined;
}

export interface ServerOptions {
  /** Where pino writes. Default: stderr (stdout is left for the address line and command output). */
  logStream?: NodeJS.WritableStream;
  /** Passed to the core (tests use an in-memory store). Default: durable JSONL sessions. */
  core?: CoreOptions;
  /** Where the `OTEL_*` variables are read (services/otel-sdk.ts). Default: `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Characters of an unknown path a 404 repeats. */
const SHOWN_PATH_CHARS = 200;

export async function createServer(config: PtcConfig, options: ServerOptions = {}): Promise<PtcServer> {
  assertWorkspaceApart(config);
  if (!isLoopbackHost(config.host) && config.token === undefined && config.tenants.length === 0) {
    throw new ConfigError(
      `refusing to listen on ${config.host} without a token: set PTC_TOKEN (or --token) to a long random string, or bind 127.0.0.1`,
    );
  }
  const app = Fastify({
    logger: {
      level: config.logLevel,
      stream: options.logStream ?? process.stderr,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
    },
    bodyLimit: config.bodyLimit,
    // No parameter is longer than the URL Node accepts (its header size limit covers the request
    // line): the router never refuses one itself, as its refusal would run before auth. A hook
    // after auth answers 414 PARAM_TOO_LONG past MAX_PATH_PARAM_LENGTH (edge.ts).
    routerOptions: { maxParamLength: maxHeaderSize },
    // The router's refusals (a bad percent-encoding), in the catalogue's shape.
    frameworkErrors: sendError,
    // Node measures requestTimeout (and headersTimeout) only until the request
    // is received, not while it runs: a trickled body is cut off (408) after
    // receiveTimeoutMs, a 10-minute run is not. Connections are checked at a
    // quarter of the timeout (Node's default is every 30 s).
    requestTimeout: config.receiveTimeoutMs,
    http: {
      headersTimeout: config.receiveTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(config.receiveTimeoutMs / 4))),
    },
    // No idle-socket timeout: a run's response may be silent for MAX_RUN_MS.
    connectionTimeout: 0,
    keepAliveTimeout: 65_000,
    // Closing is answered by our own hook below, in the catalogue's shape.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // What Node cannot parse (conflicting framing, a bad header), over-large headers, a 408: answered in the catalogue's shape.
    clientErrorHandler: answerClientError,
  });
  const gate = capConnections(app.server, config, app.log);
  lingerOnClose(app, { maxBytes: 4 * config.bodyLimit, timeoutMs: config.receiveTimeoutMs });
  app.setErrorHandler(sendError);
  useStrictUtf8Json(app);
  app.setNotFoundHandler((request, reply) => {
    // The path helps find a typo; a long one (up to Node's header limit) is cut, not echoed whole.
    const shown = request.url.split('?', 1)[0];
    const path = shown.length > SHOWN_PATH_CHARS ? `${shown.slice(0, SHOWN_PATH_CHARS)}…` : shown;
    return sendError(new HttpError('NOT_FOUND', `no route ${request.method} ${path}: see /docs/json`), request, reply);
  });

  let tracing: ServiceTracing | undefined;
  let core: PtcCore;
  try {
    // First: a run made once the server is up is traced, and a missing package fails the start.
    tracing = await startServiceTracing(options.env ?? process.env);
    core = await createCore(config, { durable: true, logger: app.log, ...options.core });
  } catch (error) {
    await app.close();
    await tracing?.shutdown();
    throw error;
  }
  const runs = createRunTracker({ maxPerClient: config.maxConcurrentRunsPerClient });
  let shuttingDown = false;
  let mcp: McpRoutes;
  let ledger: RunLedger;
  try {
    ledger = await createLedger(core, runs, app);
    mcp = await mountRoutes(app, core, config, runs, ledger, gate, () => shuttingDown);
  } catch (error) {
    await app.close();
    await core.close();
    await tracing?.shutdown();
    throw error;
  }

  let closing: Promise<void> | undefined;
  let closeStep: string | undefined;
  return {
    app,
    core,
    config,
    async listen() {
      const address = await app.listen({ host: config.host, port: config.port });
      // Generate the typings (and load their compiler) off the request path, so
      // the first GET /v1/typings or /v1/prompt does not pay for it; a failure
      // here resurfaces, as a proper error, on that request.
      setImmediate(() => void core.codeMode.typings().catch(() => undefined));
      return address;
    },
    close() {
      closing ??= (async () => {
        shuttingDown = true;
        const closed = app.close();
        const grace = setTimeout(() => runs.cancelAll('the server is shutting down'), config.shutdownGraceMs);
        grace.unref();
        closeStep = 'runs';
        await runs.idle();
        clearTimeout(grace);
        // Every run ended: leave the cluster, so no replica marks anything of ours lost.
        closeStep = 'cluster';
        await ledger.close();
        // MCP clients keep an SSE stream open: no run needs it any more.
        closeStep = 'mcp';
        await mcp.close();
        // In-flight responses are written now; what remains are kept-alive sockets.
        closeStep = 'http';
        app.server.closeIdleConnections();
        const hard = setTimeout(() => app.server.closeAllConnections(), 2_000);
        hard.unref();
        await closed;
        clearTimeout(hard);
        closeStep = 'sandbox';
        await core.close();
        // Last: the spans of everything above are exported before the provider stops.
        closeStep = 'tracing';
        await tracing?.shutdown();
        closeStep = undefined;
      })();
      return closing;
    },
    closingStep: () => closeStep,
  };
}

/** Auth, rate limit, load shedding, OpenAPI and the plugin, on the root instance. */
/** The shared runs table with a database (heartbeats, reaping, cross-replica cancels), else this replica's memory. */
async function createLedger(core: PtcCore, runs: RunTracker, app: FastifyInstance): Promise<RunLedger> {
  if (core.database === undefined) return createMemoryRunLedger();
  const { createPostgresRunLedger } = await import('./postgres/run-ledger.ts');
  return createPostgresRunLedger({
    db: core.database.db,
    replica: replicaName(),
    append: (event) => core.sessions.append(event),
    cancelLocal: (callId) => runs.cancel(callId, 'cancelled by DELETE /v1/runs on another replica'),
    onWarning: (message, error) => app.log.warn({ err: error }, message),
  });
}

async function mountRoutes(
  app: FastifyInstance,
  core: PtcCore,
  config: PtcConfig,
  runs: RunTracker,
  ledger: RunLedger,
  gate: ConnectionGate,
  isShuttingDown: () => boolean,
): Promise<McpRoutes> {
  const metrics = createMetrics({ poolStatus: () => core.runtime.status() });
  // First of all: a connection past its client's cap gets its 503 before anything else runs.
  app.addHook('onRequest', refuseOverCap(gate, config, () => metrics.connectionRefused('per-client')));

  const isProbe = (request: FastifyRequest) => (request.routeOptions.config as ProbeRouteConfig | undefined)?.probe === true;
  // While closing: probes still answer (readyz says 503), everything else is
  // refused, and every response asks the client to drop its kept-alive socket.
  app.addHook('onRequest', async (request, reply) => {
    if (!isShuttingDown() || isProbe(request)) return;
    reply.header('connection', 'close');
    throw new HttpError('NOT_READY', 'the server is shutting down: retry against a running instance');
  });
  app.addHook('onSend', async (_request, reply) => {
    if (isShuttingDown()) reply.header('connection', 'close');
  });
  app.addHook('onRequest', createHostCheck({ loopback: isLoopbackHost(config.host), allowedHosts: config.allowedHosts }));
  const auth = config.tenants.length > 0 ? config.tenants : config.token;
  if (auth !== undefined) app.addHook('onRequest', createBearerAuth(auth));
  await app.register(rateLimit, {
    global: true,
    max: config.rateLimit.max,
    timeWindow: config.rateLimit.timeWindow,
    allowList: (request) => isProbe(request),
    keyGenerator: clientKeyOf,
    errorResponseBuilder: (_request, context) =>
      new HttpError('RATE_LIMITED', `rate limit of ${context.max} requests per ${context.after} reached: retry after the Retry-After seconds`),
  });
  // After auth and the rate limit, as any route's answer.
  app.addHook('onRequest', refuseLongParams);
  // Start-up (module compiles, warm isolates) blocks the loop for a while:
  // its lag is not load, so shedding starts a little after listen.
  let sheddingFrom = Number.POSITIVE_INFINITY;
  app.addHook('onListen', async () => {
    sheddingFrom = performance.now() + SHEDDING_WARMUP_MS;
  });
  await app.register(underPressure, {
    maxEventLoopDelay: 1000,
    retryAfter: 5,
    pressureHandler: ((request, reply, type, value) =>
      performance.now() < sheddingFrom ? undefined : shedLoad(request, reply, type, value)) as FastifyUnderPressureOptions['pressureHandler'],
  });
  await app.register(swagger, {
    openapi: {
      info: { title: 'ptc-executor', description: 'Run model-written programs against canonical tools.', version: '0.1.0' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: auth === undefined ? [] : [{ bearer: [] }],
    },
  });
  // One budget for every face: the routes' bodies and streams and /mcp's.
  const outbound = createOutbound({
    writeStallMs: config.writeStallMs,
    maxTotalBytes: config.maxOutboundMiB * MiB,
    maxConnectionBytes: config.maxConnectionOutboundMiB * MiB,
  });
  await app.register(ptcPlugin, {
    registry: core.registry,
    codeMode: core.codeMode,
    sessions: core.sessions,
    logs: core.logs,
    metrics,
    runtime: core.runtime,
    runs,
    ledger,
    ...(core.database === undefined
      ? {}
      : { databaseAvailable: core.database.db.available, followSession: core.database.events.follow }),
    // A volume the image does not own is root's: every write would fail while probes said ready.
    writableFolders: [
      { name: 'workspace', path: config.workspace },
      { name: 'data', path: config.dataDir },
    ],
    isShuttingDown,
    ...(core.retention === undefined ? {} : { retention: core.retention }),
    outbound,
  });
  registerPlayground(app);
  const openapi = async () => app.swagger();
  app.get('/docs', { schema: { hide: true } }, openapi);
  app.get('/docs/json', { schema: { hide: true } }, openapi);
  const catalog = createMcpCatalog({
    registry: core.registry,
    typings: () => core.codeMode.typings(),
    schemas: () => core.codeMode.toolSchemas(),
    typingsBudget: config.typingsBudget,
    promptLimits: { ...config.limits },
  });
  const mcp = registerMcpRoutes(app, {
    registry: core.registry,
    sessions: core.sessions,
    logs: core.logs,
    codeMode: core.codeMode,
    metrics,
    catalog,
    runs,
    maxSessionsPerTenant: config.maxMcpSessionsPerTenant,
    outbound,
    ...(core.retention === undefined ? {} : { retention: core.retention }),
    // A shared face: each MCP session decides only its own paused runs (POST /v1/runs/:callId/decision decides any).
    durable: { codeMode: core.codeMode, approvers: core.approvers, mayPause: core.mayPause, ownRunsOnly: true },
  });
  return {
    get size() {
      return mcp.size;
    },
    async close() {
      catalog.close();
      await mcp.close();
    },
  };
}

/**
 * under-pressure's handler: a returned body is sent as is, `undefined` lets
 * the request through (its typings only allow the latter). Infinity means the
 * loop took no sample in the last interval (one long start-up task): not a
 * measurement, so nothing is shed.
 */
function shedLoad(_request: FastifyRequest, reply: FastifyReply, _type: string, value: number | undefined): ErrorBody | undefined {
  if (value === undefined || !Number.isFinite(value)) return undefined;
  void reply.code(503).header('retry-after', '5');
  return errorBody(503, 'UNDER_PRESSURE', 'the server is overloaded (event loop lagging): retry after the Retry-After seconds');
}
