/**
 * The HTTP edge before any route runs: which `Host` and `Origin` a request
 * may carry (DNS rebinding), how many connections a client may hold, and
 * how a connection is closed under a client still sending.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProbeRouteConfig } from './auth.ts';
import { HttpError, MAX_PATH_PARAM_LENGTH, paramTooLong } from './http-errors.ts';

/** Names that only reach this machine: always accepted when bound to loopback. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

export interface HostCheckOptions {
  /** True when the server is bound to a loopback address. */
  loopback: boolean;
  /** Extra host names (no port), compared case-insensitively. */
  allowedHosts: readonly string[];
}

/**
 * An onRequest hook refusing (403) a `Host` that is not allowed and an
 * `Origin` that is neither the request's own host nor an allowed host.
 *
 * Bound to loopback, a web page can only reach the service through a name
 * it controls that resolves to 127.0.0.1 (DNS rebinding): its requests then
 * carry that name in `Host`, which is refused. A browser always sends
 * `Origin` on cross-origin and non-GET requests; tools such as curl send
 * none, so a missing `Origin` is accepted. An `Origin` is accepted when it
 * is the request's own host, or its host name is one the `Host` check
 * accepts by name (loopback names when bound to loopback, the allow-list);
 * `null` and every other origin are refused. Probes are exempt from both
 * checks: they run nothing and reveal nothing, and orchestrators call them
 * by addresses the allow-list cannot know.
 */
export function createHostCheck(options: HostCheckOptions) {
  const allowed = new Set(options.allowedHosts.map((host) => host.toLowerCase()));
  if (options.loopback) for (const name of LOOPBACK_NAMES) allowed.add(name);
  // Bound elsewhere with no list: any Host (the token is the guard there).
  const anyHost = allowed.size === 0;
  const isAllowed = (hostname: string) => anyHost || allowed.has(hostname) || (options.loopback && /^127(\.\d{1,3}){3}$/.test(hostname));

  return async function hostCheck(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    if ((request.routeOptions.config as ProbeRouteConfig | undefined)?.probe === true) return;
    const host = request.headers.host;
    const hostname = typeof host === 'string' ? hostnameOf(host) : undefined;
    if (hostname === undefined || !isAllowed(hostname)) {
      throw new HttpError(
        'FORBIDDEN_HOST',
        'the Host header names a host this server does not answer to: call it by a loopback name (localhost, 127.0.0.1, [::1]) or add the name to allowedHosts',
      );
    }
    const origin = request.headers.origin;
    if (origin === undefined) return;
    const originHost = typeof origin === 'string' ? originHostOf(origin) : undefined;
    const sameHost = originHost !== undefined && typeof host === 'string' && originHost.host === normaliseHost(host, originHost.defaultPort);
    // Another page of this machine (a loopback origin when bound to loopback) or of a listed host is accepted.
    if (!sameHost && (originHost === undefined || !allowed.has(originHost.hostname))) {
      throw new HttpError(
        'FORBIDDEN_ORIGIN',
        'requests from a web page of another origin are refused: call the service from its own origin or a server-side client, or add the origin host to allowedHosts',
      );
    }
  };
}

/**
 * Recent Host headers and their hostnames: a server sees a handful of
 * distinct values, and parsing a URL per request cost a measurable share of
 * a burst. Bounded: past 64 entries nothing more is kept.
 */
const hostnames = new Map<string, string | undefined>();

/** `Host: Example.com:7700` → `example.com`; `[::1]:80` → `[::1]`; undefined when malformed. */
function hostnameOf(host: string): string | undefined {
  if (hostnames.has(host)) return hostnames.get(host);
  let hostname: string | undefined;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    hostname = undefined;
  }
  if (hostnames.size < 64) hostnames.set(host, hostname);
  return hostname;
}

/** The origin's `host[:port]` (port only when not the scheme's default) and hostname. */
function originHostOf(origin: string): { host: string; hostname: string; defaultPort: string } | undefined {
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return { host: url.host, hostname: url.hostname, defaultPort: url.protocol === 'https:' ? '443' : '80' };
  } catch {
    return undefined;
  }
}

/** The `Host` header as `URL.host` would write it for an origin with this default port. */
function normaliseHost(host: string, defaultPort: string): string | undefined {
  try {
    const url = new URL(`http://${host}`);
    return url.port === '' || url.port === defaultPort ? url.hostname : `${url.hostname}:${url.port}`;
  } catch {
    return undefined;
  }
}

/**
 * An onRequest hook, after auth: a path parameter (an id, a tool name) over
 * {@link MAX_PATH_PARAM_LENGTH} characters is answered 414
 * `PARAM_TOO_LONG`. Here rather than in the router (Fastify's
 * `maxParamLength`, set past any URL Node accepts), whose refusal runs no
 * hook: a client without a token gets 401 for it, as for a 404 or a 413.
 */
export async function refuseLongParams(request: FastifyRequest): Promise<void> {
  const params = request.params as Record<string, unknown> | undefined;
  if (params === undefined || params === null) return;
  for (const [name, value] of Object.entries(params)) {
    // `*` is the not-found route's whole path, not a parameter: a long unknown path stays a 404.
    if (name !== '*' && typeof value === 'string' && value.length > MAX_PATH_PARAM_LENGTH) throw paramTooLong();
  }
}

export interface ConnectionCaps {
  /** Open connections in total. */
  maxConnections: number;
  /** Open connections per remote address. */
  maxConnectionsPerClient: number;
}

export interface ConnectionGate {
  /** Whether this socket was opened past its client's cap: its requests are answered 503 and it is closed. */
  isRefused(socket: Socket): boolean;
}

/**
 * Caps open connections in total (Node's own `maxConnections`: it closes the
 * socket at once) and per client address (counted here, on 'connection').
 * A connection past its client's cap is not counted, and each request on it
 * is answered 503 `TOO_MANY_CONNECTIONS` with Retry-After and `Connection:
 * close` (see {@link refuseOverCap}), so a client such as Node's `fetch`
 * reads why instead of a reset socket. That costs the server a request's
 * headers, bounded by the receive timeout, and the total cap still holds;
 * a client with as many refusals pending as its cap has its further sockets
 * closed unanswered.
 */
export function capConnections(server: Server, caps: ConnectionCaps, log?: { warn(details: object, message: string): void }): ConnectionGate {
  server.maxConnections = caps.maxConnections;
  const open = new Map<string, number>();
  const refused = new WeakSet<Socket>();
  /** Per client, refused sockets still open (waiting for their request, or being answered). */
  const refusing = new Map<string, number>();
  // One warning a second at most: a client hammering its cap must not flood the log.
  let lastWarning = Number.NEGATIVE_INFINITY;
  const warn = (details: object, message: string) => {
    const now = performance.now();
    if (log === undefined || now - lastWarning < 1_000) return;
    lastWarning = now;
    log.warn(details, message);
  };
  server.on('drop', (data?: { remoteAddress?: string }) =>
    warn({ client: data?.remoteAddress, max: caps.maxConnections }, 'connection refused: the server holds maxConnections'),
  );
  server.on('connection', (socket: Socket) => {
    const client = socket.remoteAddress ?? 'unknown';
    const count = open.get(client) ?? 0;
    if (count >= caps.maxConnectionsPerClient) {
      warn({ client, max: caps.maxConnectionsPerClient }, 'connection refused: the client holds maxConnectionsPerClient');
      // Answering costs a socket until the answer is out: a client gets as many such answers pending
      // as its cap allows it connections, and past that its sockets are closed unanswered.
      const pending = refusing.get(client) ?? 0;
      if (pending >= caps.maxConnectionsPerClient) {
        socket.destroy();
        return;
      }
      refusing.set(client, pending + 1);
      refused.add(socket);
      socket.once('close', () => {
        const left = (refusing.get(client) ?? 1) - 1;
        if (left <= 0) refusing.delete(client);
        else refusing.set(client, left);
      });
      return;
    }
    open.set(client, count + 1);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left <= 0) open.delete(client);
      else open.set(client, left);
    });
  });
  return { isRefused: (socket) => refused.has(socket) };
}

/**
 * The first onRequest hook: a request on a connection past its client's cap
 * is answered 503 `TOO_MANY_CONNECTIONS` (Retry-After, `Connection: close`),
 * before auth or any route runs. `onRefused` counts it (for /metrics).
 */
export function refuseOverCap(gate: ConnectionGate, caps: ConnectionCaps, onRefused?: () => void) {
  return async function connectionCap(request: FastifyRequest): Promise<void> {
    if (!gate.isRefused(request.raw.socket)) return;
    onRefused?.();
    throw new HttpError(
      'TOO_MANY_CONNECTIONS',
      `this client already holds ${caps.maxConnectionsPerClient} open connections (maxConnectionsPerClient): reuse them (keep-alive) or close some, then retry after the Retry-After seconds`,
      { 'retry-after': '1', connection: 'close' },
    );
  };
}

export interface LingerOptions {
  /** Bytes of the unread request read and discarded at most before the socket is closed anyway. */
  maxBytes: number;
  /** Longest the socket lingers, ms. */
  timeoutMs: number;
}

/**
 * Lingering close, as nginx does it: a response that closes its connection
 * while the client is still sending the request (a 413, a refusal past the
 * connection cap) ends only the server's side at first, and reads and
 * discards what the client still sends, until the client closes, `maxBytes`
 * have come, or `timeoutMs` passed. Closing at once would reset the socket
 * under a client that is still writing, and a client that writes its body
 * before it reads (Node's `fetch`) then sees a broken pipe, never the answer.
 */
export function lingerOnClose(app: FastifyInstance, options: LingerOptions): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.raw.complete || reply.getHeader('connection') !== 'close') return payload;
    const socket = request.raw.socket as Socket & { destroySoon?: () => void };
    // Node ends a `Connection: close` response's socket with destroySoon(): here, it lingers first.
    socket.destroySoon = () => linger(socket, options);
    return payload;
  });
}

function linger(socket: Socket, { maxBytes, timeoutMs }: LingerOptions): void {
  let read = 0;
  const close = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(close, timeoutMs);
  timer.unref();
  socket.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > maxBytes) close();
  });
  socket.once('end', close);
  socket.once('close', () => clearTimeout(timer));
  socket.end();
  socket.resume();
}
