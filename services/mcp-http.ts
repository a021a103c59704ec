/**
 * `/mcp`: the MCP face over the SDK's Streamable HTTP transport, one
 * transport and one `Server` per MCP session. Each MCP session's runs are
 * logged under the session id `mcp-<Mcp-Session-Id>`. The routes sit behind
 * whatever auth, rate limit and shutdown hooks the instance has.
 */
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ToolRegistry } from '../src/tool.ts';
import type { SessionSource } from './call-runner.ts';
import type { LogRouter } from './log-router.ts';
import type { McpCatalog } from './mcp-catalog.ts';
import { createPtcMcpServer, type McpDurableOptions } from './mcp-server.ts';
import type { PtcMetrics } from './metrics.ts';
import type { RunTracker } from './run-tracker.ts';

/** MCP sessions kept open at once; past it the least recently used one is closed (its client re-initializes). */
export const MAX_MCP_SESSIONS = 256;

export interface McpRouteOptions {
  registry: ToolRegistry;
  sessions: SessionSource;
  catalog: McpCatalog;
  runs: RunTracker;
  logs?: Pick<LogRouter, 'watch'>;
  metrics?: PtcMetrics;
  /** Default `/mcp`. */
  path?: string;
  /** Durable runs: `decide_run`, and approval in place for clients with elicitation. */
  durable?: McpDurableOptions;
}

export interface McpRoutes {
  /** MCP sessions open now. */
  readonly size: number;
  /** Closes every session's transport. */
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  close(): Promise<void>;
}

export function registerMcpRoutes(app: FastifyInstance, options: McpRouteOptions): McpRoutes {
  const path = options.path ?? '/mcp';
  // Insertion order is recency order: a used session is moved to the end.
  const open = new Map<string, Session>();

  function touch(id: string, session: Session): void {
    open.delete(id);
    open.set(id, session);
  }

  async function startSession(request: FastifyRequest): Promise<Session> {
    let session: Session | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        if (session === undefined) return;
        open.set(id, session);
        while (open.size > MAX_MCP_SESSIONS) {
          const [oldest, evicted] = open.entries().next().value!;
          open.delete(oldest);
          void evicted.close();
        }
      },
    });
    const sessionId = () => `mcp-${transport.sessionId ?? 'pending'}`;
    const { server, dispose } = createPtcMcpServer({
      registry: options.registry,
      sessions: options.sessions,
      catalog: options.catalog,
      runs: options.runs,
      logs: options.logs,
      metrics: options.metrics,
      ...(options.durable === undefined ? {} : { durable: options.durable }),
      get sessionId() {
        return sessionId();
      },
      client: request.ip,
    });
    let closed = false;
    session = {
      transport,
      async close() {
        if (closed) return;
        closed = true;
        dispose();
        await server.close().catch(() => undefined);
      },
    };
    transport.onclose = () => {
      if (transport.sessionId !== undefined) open.delete(transport.sessionId);
      void session?.close();
    };
    await server.connect(transport);
    return session;
  }

  async function handle(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers['mcp-session-id'];
    const id = typeof header === 'string' ? header : undefined;
    let session = id === undefined ? undefined : open.get(id);
    if (session !== undefined && id !== undefined) touch(id, session);
    else if (id === undefined && request.method === 'POST' && isInitializeRequest(request.body)) session = await startSession(request);
    if (session === undefined) {
      const message = id === undefined ? 'no Mcp-Session-Id: start with an initialize request' : 'unknown or expired Mcp-Session-Id: initialize a new session';
      await reply.code(id === undefined ? 400 : 404).send({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
      return;
    }
    // The transport writes the response (JSON or an SSE stream) itself.
    reply.hijack();
    await session.transport.handleRequest(request.raw, reply.raw, request.body);
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
      await Promise.all(sessions.map((session) => session.close()));
    },
  };
}
