/**
 * Bearer-token auth as an onRequest hook. Probes (`/healthz`, `/readyz`,
 * marked by route config) stay open so orchestrators need no secret. With
 * named tokens, the matching token's name becomes the request's tenant
 * (services/tenancy.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TenantToken } from './config-schema.ts';
import { HttpError } from './http-errors.ts';
import { setTenant } from './tenancy.ts';

/** Route config flag: routes declaring `config: { probe: true }` skip auth. */
export interface ProbeRouteConfig {
  probe?: boolean;
  /** Served without a token but otherwise like any route (rate limited, refused while closing): the playground page and its assets. */
  public?: boolean;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** One token (one tenant, ids stored as given), or named tokens (one tenant each). */
export function createBearerAuth(tokens: string | readonly TenantToken[]) {
  const expected = typeof tokens === 'string' ? [{ name: undefined, digest: digest(tokens) }] : tokens.map((t) => ({ name: t.name, digest: digest(t.token) }));
  return async function bearerAuth(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const config = request.routeOptions.config as ProbeRouteConfig | undefined;
    if (config?.probe === true || config?.public === true) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header) : null;
    // Compare digests: constant time, and no length leak. Every token is
    // compared, so the time does not tell which tenant (if any) matched.
    let tenant: { name: string | undefined } | undefined;
    if (match !== null) {
      const given = digest(match[1].trim());
      for (const candidate of expected) if (timingSafeEqual(given, candidate.digest)) tenant ??= candidate;
    }
    if (tenant === undefined) {
      throw new HttpError(
        'UNAUTHORIZED',
        match === null ? 'missing bearer token: send `authorization: Bearer <token>`' : 'wrong bearer token: send the token the server was started with',
        { 'www-authenticate': 'Bearer' },
      );
    }
    if (tenant.name !== undefined) setTenant(request, tenant.name);
  };
}
