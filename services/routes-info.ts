/**
 * The read-only routes: tools, typings, prompt, session events, probes and
 * metrics.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from './http-errors.ts';
import type { PtcPluginOptions } from './plugin.ts';
import { tenantOf } from './tenancy.ts';
import { followSessionEvents } from './session-follow.ts';
import { outboundFull, type Outbound } from './outbound.ts';
import { EVENTS_SCHEMA, PROBE_SCHEMA, PROMPT_SCHEMA, TOOLS_SCHEMA, TYPINGS_SCHEMA } from './route-schemas.ts';

export function registerInfoRoutes(app: FastifyInstance, options: PtcPluginOptions & { outbound: Outbound }): void {
  const { registry, codeMode, sessions, metrics, runtime, outbound } = options;
  let ready = runtime === undefined;
  runtime?.ready().then(
    () => (ready = true),
    (error: unknown) => app.log.error({ err: error }, 'the sandbox runtime failed to start'),
  );

  app.get('/v1/tools', { schema: TOOLS_SCHEMA }, async () => ({ tools: registry.schemas() }));

  app.get('/v1/typings', { schema: TYPINGS_SCHEMA }, async (request, reply) => {
    const text = await codeMode.typings();
    const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 32)}"`;
    reply.header('etag', etag).header('cache-control', 'no-cache');
    if (matchesEtag(request, etag)) return reply.code(304).send();
    return reply.type('text/plain; charset=utf-8').send(text);
  });

  app.get('/v1/prompt', { schema: PROMPT_SCHEMA }, async (_request, reply) =>
    reply.type('text/markdown; charset=utf-8').send(await codeMode.prompt()),
  );

  const follow = options.followSession ?? sessions.followSession;
  app.get('/v1/sessions/:id/events', { schema: EVENTS_SCHEMA }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const { after, limit } = request.query as { after: number; limit: number };
    // A tenant reads only under its own prefix (services/tenancy.ts).
    const tenant = tenantOf(request);
    // A page may be megabytes: none while clients hold the outbound cap unread.
    if (outbound.full()) throw outboundFull();
    const accept = request.headers.accept;
    if (follow !== undefined && typeof accept === 'string' && accept.includes('text/event-stream')) {
      const stored = tenant.inner(id, 'id');
      // Validates the id (400) before the stream opens.
      try {
        await sessions.readPage(stored, { after, limit: 1 });
      } catch (error) {
        if (error instanceof RangeError) throw new HttpError('INVALID_REQUEST', tenant.outerMessage(error.message));
        throw new HttpError('EVENT_LOG_UNAVAILABLE', `the log of session ${id} cannot be read right now: retry later; the server log has the cause`);
      }
      return followSessionEvents(request, reply, {
        sessionId: stored,
        after,
        limit,
        read: async (from, max) => sessions.readPage(stored, { after: from, limit: max }),
        follow,
        show: (event) => (tenant.name === undefined ? event : tenant.event(event)),
        outbound,
      });
    }
    let page;
    try {
      page = await sessions.readPage(tenant.inner(id, 'id'), { after, limit });
    } catch (error) {
      if (error instanceof RangeError) throw new HttpError('INVALID_REQUEST', tenant.outerMessage(error.message));
      request.log.error({ err: error, sessionId: id }, 'a session log could not be read');
      throw new HttpError('EVENT_LOG_UNAVAILABLE', `the log of session ${id} cannot be read right now: retry later; the server log has the cause`);
    }
    if (page.damage !== undefined) request.log.warn({ sessionId: id, damage: page.damage }, 'a session log is damaged');
    return tenant.name === undefined ? page : { ...page, events: page.events.map(tenant.event) };
  });

  app.get('/healthz', { schema: PROBE_SCHEMA, config: { probe: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: PROBE_SCHEMA, config: { probe: true } }, async () => {
    if (options.isShuttingDown?.() === true) throw new HttpError('NOT_READY', 'the server is shutting down');
    if (!ready) throw new HttpError('NOT_READY', 'the sandbox pool is still starting: retry shortly');
    const log = await sessions.health?.();
    if (log !== undefined && !log.ok) {
      throw new HttpError(
        'NOT_READY',
        options.databaseAvailable !== undefined
          ? `the shared database is unreachable or failing (${log.code}): ready again once it answers`
          : `session logs cannot be written (${log.code}): free disk space or make the data folder writable; ready again once a write succeeds`,
      );
    }
    for (const folder of options.writableFolders ?? []) {
      const problem = await unwritable(folder.path);
      if (problem !== undefined) {
        throw new HttpError('NOT_READY', `the ${folder.name} folder is not writable by this process (${problem}): give its owner or mode to the server's user, or mount it writable; ready again once it is`);
      }
    }
    // Saturated: a new run would wait for a compute slot or memory headroom. A load balancer sheds load before requests queue.
    const status = runtime?.status();
    if (status?.saturated === true) {
      const waitFor = status.saturatedBy === 'compute' ? 'a compute slot (every one is held by runs computing)' : 'memory headroom';
      throw new HttpError('NOT_READY', `the sandbox is saturated: new runs would wait for ${waitFor}; send them elsewhere or retry shortly`);
    }
    return { status: 'ready' };
  });

  if (metrics !== undefined) {
    app.get('/metrics', { schema: { tags: ['health'], produces: ['text/plain'] } }, async (_request, reply) => {
      const { contentType, body } = await metrics.render();
      return reply.type(contentType).send(body);
    });
  }
}

/** Why this process cannot create files in `folder` (an error code), or undefined when it can. */
async function unwritable(folder: string): Promise<string | undefined> {
  try {
    await access(folder, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'unknown error';
  }
}

function matchesEtag(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}
