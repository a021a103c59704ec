/**
 * Tenants: with named tokens (`auth.tokens`), each token is a tenant, and
 * every id a client names (sessionId, callId) is stored under the tenant's
 * prefix: `acme` asking for session `s1` reads and writes
 * `<data dir>/sessions/acme_s1.jsonl`, and cancels `acme_<callId>`. Ids are
 * translated at the HTTP edge both ways, so a tenant never sees the prefix
 * in ids and cannot name another tenant's session or run: its own prefix is
 * always prepended. Without named tokens (no token, or one) there is one
 * tenant and ids are stored as given.
 *
 * Tenant names are 1-32 of a-z 0-9 (no `_`): `acme_` can never be a prefix
 * of another tenant's stored ids, and names that differ only in case (one
 * file on a case-insensitive disk) cannot exist.
 */
import type { FastifyRequest } from 'fastify';
import type { SessionLogEvent } from '../src/events.ts';
import type { CallResponse } from './call-runner.ts';
import { HttpError } from './http-errors.ts';

/** The longest stored session or call id (the session files' name pattern). */
export const MAX_STORED_ID_LENGTH = 128;

export interface TenantScope {
  /** Undefined for the one tenant of a server without named tokens. */
  readonly name: string | undefined;
  /** A client's id → the stored id; 400 when the prefixed id would be too long. */
  inner(id: string, field: string): string;
  /** A stored id → the client's id. */
  outer(id: string): string;
  /**
   * A message naming stored ids → the same message naming the client's. The
   * code mode's errors (RUN_NOT_FOUND, RUN_NOT_PAUSED, JOURNAL_CORRUPT) know
   * only stored ids, and quote them as JSON: `"acme_c1"` becomes `"c1"`.
   */
  outerMessage(message: string): string;
  event<E extends SessionLogEvent>(event: E): E;
  response(body: CallResponse): CallResponse;
}

const scopes = new Map<string, TenantScope>();
const tenants = new WeakMap<FastifyRequest, string>();

/** Called by the auth hook once the token matched a named tenant. */
export function setTenant(request: FastifyRequest, name: string): void {
  tenants.set(request, name);
}

/**
 * The key of the per-client caps (runs in flight, the rate limit, MCP
 * sessions): the tenant with named tokens, else the client's address.
 * Behind a reverse proxy every tenant shares one address, so keying on it
 * would let one tenant's load refuse the others.
 */
export function clientKeyOf(request: FastifyRequest): string {
  const name = tenants.get(request);
  return name === undefined ? request.ip : `tenant:${name}`;
}

/**
 * The tenant a stored id belongs to, for the shared workers' turns; with no
 * named tokens, undefined (one tenant).
 */
export function tenantOfStoredId(names: readonly string[]): ((id: string) => string | undefined) | undefined {
  if (names.length === 0) return undefined;
  const known = new Set(names);
  return (id) => {
    const end = id.indexOf('_');
    const name = end === -1 ? undefined : id.slice(0, end);
    return name !== undefined && known.has(name) ? name : undefined;
  };
}

/** The scope a request's ids live in. */
export function tenantOf(request: FastifyRequest): TenantScope {
  return scopeOf(tenants.get(request));
}

export function scopeOf(name: string | undefined): TenantScope {
  const key = name ?? '';
  let scope = scopes.get(key);
  if (scope === undefined) scopes.set(key, (scope = name === undefined ? SINGLE : prefixed(name)));
  return scope;
}

const SINGLE: TenantScope = {
  name: undefined,
  inner: (id) => id,
  outer: (id) => id,
  outerMessage: (message) => message,
  event: (event) => event,
  response: (body) => body,
};

function prefixed(name: string): TenantScope {
  const prefix = `${name}_`;
  const outer = (id: string) => (id.startsWith(prefix) ? id.slice(prefix.length) : id);
  const event = <E extends SessionLogEvent>(e: E): E => {
    const translated: SessionLogEvent =
      e.type === 'log/gap'
        ? { ...e, sessionId: outer(e.sessionId) }
        : e.type === 'tool/result'
          ? { ...e, sessionId: outer(e.sessionId), callId: outer(e.callId) }
          : e.type === 'agent/context' || e.type === 'run/paused' || e.type === 'run/resumed' || e.type === 'run/reverted'
            ? { ...e, sessionId: outer(e.sessionId), callId: outer(e.callId), rootCallId: outer(e.rootCallId) }
            : { ...e, sessionId: outer(e.sessionId), callId: outer(e.callId), rootCallId: outer(e.rootCallId), parentCallId: outer(e.parentCallId) };
    return translated as E;
  };
  return {
    name,
    inner(id, field) {
      if (prefix.length + id.length > MAX_STORED_ID_LENGTH) {
        throw new HttpError(
          'INVALID_REQUEST',
          `${field} is too long for this tenant: use at most ${MAX_STORED_ID_LENGTH - prefix.length} characters (ids are stored under the tenant's name)`,
        );
      }
      return prefix + id;
    },
    outer,
    // Ids are letters, digits, `_` and `-`, so a quoted stored id is `"` + prefix + id + `"`.
    outerMessage: (message) => message.replaceAll(`"${prefix}`, '"'),
    event,
    response: (body) => {
      const translated: CallResponse = { ...body, callId: outer(body.callId), sessionId: outer(body.sessionId), events: body.events.map(event) };
      if (body.paused !== undefined) {
        const paused = { ...(body.paused as { callId: string }), callId: outer(body.callId) };
        translated.paused = paused;
        translated.value = { ...(body.value as object), paused };
      }
      if (body.contexts !== undefined) {
        translated.contexts = body.contexts.map((context) => (context.callId === undefined ? context : { ...context, callId: outer(context.callId) }));
      }
      const nestedCalls = body.stats.nestedCalls;
      if (nestedCalls !== undefined) translated.stats = { ...body.stats, nestedCalls: nestedCalls.map((call) => ({ ...call, callId: outer(call.callId) })) };
      return translated;
    },
  };
}
