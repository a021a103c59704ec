/**
 * Bearer-token auth as an onRequest hook. Probes (`/healthz`, `/readyz`,
 * marked by route config) stay open so orchestrators need no secret.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './http-errors.ts';

/** Route config flag: routes declaring `config: { probe: true }` skip auth. */
export interface ProbeRouteConfig {
  probe?: boolean;
  /** Served without a token but otherwise like any route (rate limited, refused while closing): the playground page and its assets. */
  public?: boolean;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

export function createBearerAuth(token: string) {
  const expected = digest(token);
  return async function bearerAuth(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const config = request.routeOptions.config as ProbeRouteConfig | undefined;
    if (config?.probe === true || config?.public === true) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header) : null;
    // Compare digests: constant time, and no length leak.
    if (match === null || !timingSafeEqual(digest(match[1].trim()), expected)) {
      throw new HttpError(
        'UNAUTHORIZED',
        match === null ? 'missing bearer token: send `authorization: Bearer <token>`' : 'wrong bearer token: send the token the server was started with',
        { 'www-authenticate': 'Bearer' },
      );
    }
  };
}
