/**
 * `/mcp`: the MCP face over the SDK's Streamable HTTP transport, one
 * transport and one `Server` per MCP session. A session belongs to the
 * tenant that opened it: another tenant's requests find no such session.
 * Each MCP session's runs are logged under the session id
 * `mcp-<Mcp-Session-Id>`, in its tenant's namespace. The routes sit behind
 * whatever auth, rate limit and shutdown hooks the instance has.
 */
import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ToolRegistry } from '../src/tool.ts';
import type { SessionSource, StatsSource } from './call-runner.ts';
import type { LogRouter } from './log-router.ts';
import type { McpCatalog } from './mcp-catalog.ts';
import { createPtcMcpServer, type McpDurableOptions } from './mcp-server.ts';
import type { PtcMetrics } from './metrics.ts';
import type { RunTracker } from './run-tracker.ts';
import { HttpError } from './http-errors.ts';
import { createOutbound, outboundFull, type Outbound } from './outbound.ts';
import type { Retention } from './retention.ts';
import { runStorageHooks } from './storage-admission.ts';
import { clientKeyOf, tenantOf, type TenantScope } from './tenancy.ts';

/** MCP sessions a tenant may keep open at once (the default of `maxMcpSessionsPerTenant`). */
export const MAX_MCP_SESSIONS = 256;

export interface McpRouteOptions {
  registry: ToolRegistry;
  sessions: SessionSource;
  catalog: McpCatalog;
  runs: RunTracker;
  logs?: Pick<LogRouter, 'watch'>;
  /** Each run's budgets, for `structuredContent.stats`. Default: the wall time and the calls only. */
  codeMode?: StatsSource;
  metrics?: PtcMetrics;
  /** Default `/mcp`. */
  path?: string;
  /** MCP sessions one tenant may keep open. Default {@link MAX_MCP_SESSIONS}. */
  maxSessionsPerTenant?: number;
  /** Durable runs: `decide_run`, and approval in place for clients with elicitation. */
  durable?: McpDurableOptions;
  /** Bounds on what clients have not read yet, shared with the HTTP routes. Default: `createOutbound()`. */
  outbound?: Outbound;
  /** Quotas on session logs: a run over one is refused (STORAGE_QUOTA), as on POST /v1/run. */
  retention?: Retention;
}

export interface McpRoutes {
  /** MCP sessions open now. */
  readonly size: number;
  /** Closes every session's transport. */
  close(): Promise<void>;
}

interface Session {
  /** The tenant that opened it (empty without named tokens: one tenant): only that tenant may use it. */
  owner: string;
  transport: WebStandardStreamableHTTPServerTransport;
  /** Tool calls being answered: a session with one in flight is never evicted. */
  readonly answering: number;
  close(): Promise<void>;
}

export function registerMcpRoutes(app: FastifyInstance, options: McpRouteOptions): McpRoutes {
  const path = options.path ?? '/mcp';
  const maxPerTenant = options.maxSessionsPerTenant ?? MAX_MCP_SESSIONS;
  const outbound = options.outbound ?? createOutbound();
  // Insertion order is recency order: a used session is moved to the end.
  const open = new Map<string, Session>();
  // Per tenant, its sessions (initialized or starting), in recency order too.
  const owned = new Map<string, Set<Session>>();

  function touch(id: string, session: Session): void {
    open.delete(id);
    open.set(id, session);
    const mine = owned.get(session.owner);
    mine?.delete(session);
    mine?.add(session);
  }

  function forget(session: Session): void {
    const mine = owned.get(session.owner);
    mine?.delete(session);
    if (mine?.size === 0) owned.delete(session.owner);
  }

  /**
   * Room for one more session of `owner`: at its cap, its least recently
   * used session with no call in flight is closed (its client
   * re-initializes); with every one busy, the new one is refused. Another
   * tenant's sessions are never touched.
   */
  function makeRoom(owner: string): void {
    const mine = owned.get(owner);
    if (mine === undefined || mine.size < maxPerTenant) return;
    for (const session of mine) {
      if (session.answering > 0) continue;
      forget(session);
      if (session.transport.sessionId !== undefined) open.delete(session.transport.sessionId);
      void session.close();
      return;
    }
    throw new HttpError(
      'TOO_MANY_MCP_SESSIONS',
      `this tenant already has ${mine.size} MCP sessions, each with a call in flight (the cap is ${maxPerTenant}): wait for a call to end, or close a session (DELETE /mcp)`,
      { 'retry-after': '1' },
    );
  }

  async function startSession(request: FastifyRequest, tenant: TenantScope): Promise<Session> {
    const owner = tenant.name ?? '';
    makeRoom(owner);
    let session: Session | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        if (session !== undefined) open.set(id, session);
      },
    });
    // Stored under the tenant's prefix, so its owner reads it as `mcp-<Mcp-Session-Id>` through /v1/sessions.
    const sessionId = () => tenant.inner(`mcp-${transport.sessionId ?? 'pending'}`, 'sessionId');
    const mcp = createPtcMcpServer({
      registry: options.registry,
      sessions: options.sessions,
      catalog: options.catalog,
      runs: options.runs,
      logs: options.logs,
      ...(options.codeMode === undefined ? {} : { codeMode: options.codeMode }),
      metrics: options.metrics,
      ...(options.durable === undefined ? {} : { durable: options.durable }),
      get sessionId() {
        return sessionId();
      },
      tenant,
      // The run cap's key: the tenant with named tokens, else the address.
      client: clientKeyOf(request),
      // Storage that cannot record a run refuses it, as on POST /v1/run.
      ...runStorageHooks({ sessions: options.sessions, ...(options.retention === undefined ? {} : { retention: options.retention }) }, tenant),
    });
    let closed = false;
    session = {
      owner,
      transport,
      get answering() {
        return mcp.answering;
      },
      async close() {
        if (closed) return;
        closed = true;
        mcp.dispose();
        await mcp.server.close().catch(() => undefined);
      },
    };
    let mine = owned.get(owner);
    if (mine === undefined) owned.set(owner, (mine = new Set()));
    mine.add(session);
    transport.onclose = () => {
      if (transport.sessionId !== undefined && open.get(transport.sessionId) === session) open.delete(transport.sessionId);
      if (session !== undefined) forget(session);
      void session?.close();
    };
    await mcp.server.connect(transport);
    return session;
  }

  async function handle(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers['mcp-session-id'];
    const id = typeof header === 'string' ? header : undefined;
    const tenant = tenantOf(request);
    let session = id === undefined ? undefined : open.get(id);
    // Another tenant's session is answered as one that does not exist.
    if (session !== undefined && session.owner !== (tenant.name ?? '')) session = undefined;
    // Each request is answered on its own stream, a run's result may be megabytes: none is taken while clients hold the outbound cap unread.
    // Notifications and answers (a cancel, an elicitation's reply) still go through: they end work rather than start it.
    if (request.method === 'POST' && outbound.full() && requestIdsOf(request.body).length > 0) throw outboundFull();
    if (session !== undefined && id !== undefined) touch(id, session);
    else if (id === undefined && request.method === 'POST' && isInitializeRequest(request.body)) session = await startSession(request, tenant);
    if (session === undefined) {
      const message = id === undefined ? 'no Mcp-Session-Id: start with an initialize request' : 'unknown or expired Mcp-Session-Id: initialize a new session';
      await reply.code(id === undefined ? 400 : 404).send({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
      return;
    }
    const response = await session.transport.handleRequest(webRequestOf(request), { parsedBody: request.body });
    // An initialize the transport refused never gets an id: it holds no room.
    if (session.transport.sessionId === undefined) {
      forget(session);
      void session.close();
    }
    // The answer (an SSE stream, or a small JSON body) goes out metered, as the client takes it.
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body === null) {
      raw.end();
      return;
    }
    raw.flushHeaders();
    // Without an event store an answer whose stream is gone is lost: a client that left (or was dropped) has its calls cancelled.
    const transport = session.transport;
    const onClose = () => {
      if (raw.writableFinished) return;
      for (const requestId of requestIdsOf(request.body)) {
        transport.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'the client closed the connection' } });
      }
    };
    raw.once('close', onClose);
    await outbound.pipe(raw, response.body);
  }

  app.post(path, { schema: { hide: true } }, handle);
  app.get(path, { schema: { hide: true } }, handle);
  app.delete(path, { schema: { hide: true } }, handle);

  return {
    get size() {
      return open.size;
    },
    async close() {
      const sessions = [...open.values()];
      open.clear();
      owned.clear();
      await Promise.all(sessions.map((session) => session.close()));
    },
  };
}

/** The ids of the JSON-RPC requests (which the server answers) in a POST body, not its notifications or responses. */
function requestIdsOf(body: unknown): (string | number)[] {
  return (Array.isArray(body) ? body : [body]).filter((message) => isJSONRPCRequest(message)).map((message) => message.id);
}

/** The request as the SDK's web-standard transport reads it: method, URL and headers (the body is passed parsed). */
function webRequestOf(request: FastifyRequest): Request {
  const headers = new Headers();
  const raw = request.raw.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return new Request(new URL(request.url, 'http://localhost'), { method: request.method, headers });
}
