/**
 * The durable-run routes that do not dispatch: GET /v1/approvals and POST
 * /v1/runs/:callId/rollback (the decision, which resumes a run, is with the
 * dispatching routes). Tenant-scoped like every route: a tenant sees and
 * names only its own runs.
 */
import type { FastifyInstance } from 'fastify';
import { PtcError } from '../src/errors.ts';
import { HttpError } from './http-errors.ts';
import type { DurableControls, PtcPluginOptions } from './plugin.ts';
import { APPROVALS_SCHEMA, ROLLBACK_SCHEMA } from './route-schemas.ts';
import { tenantOf, type TenantScope } from './tenancy.ts';

export function registerApprovalRoutes(app: FastifyInstance, options: PtcPluginOptions): void {
  const durable = durableControls(options);

  app.get('/v1/approvals', { schema: APPROVALS_SCHEMA }, async (request) => {
    const tenant = tenantOf(request);
    const paused = await asHttp(tenant, () => durable().pending(tenant.inner('', 'callId')));
    return {
      approvals: paused.map((run) => ({
        callId: tenant.outer(run.callId),
        sessionId: tenant.outer(run.sessionId),
        description: run.description,
        pending: run.pending,
        pausedAt: new Date(run.pausedAt).toISOString(),
        expiresAt: new Date(run.expiresAt).toISOString(),
      })),
    };
  });

  app.post('/v1/runs/:callId/rollback', { schema: ROLLBACK_SCHEMA }, async (request) => {
    const { callId } = request.params as { callId: string };
    const tenant = tenantOf(request);
    const report = await asHttp(tenant, () => durable().rollback(tenant.inner(callId, 'callId')));
    return { ...report, callId };
  });
}

/** The code mode's durable-run controls; 404 on a plugin given a code mode without them. */
export function durableControls(options: PtcPluginOptions): () => DurableControls {
  return () => {
    const { pending, decide, rollback, durableStatus } = options.codeMode;
    if (pending === undefined || decide === undefined || rollback === undefined || durableStatus === undefined) {
      throw new HttpError('NOT_FOUND', 'this server keeps no paused runs: its code mode has no durable runs');
    }
    const codeMode = options.codeMode;
    return { pending: pending.bind(codeMode), decide: decide.bind(codeMode), rollback: rollback.bind(codeMode), durableStatus: durableStatus.bind(codeMode) };
  };
}

/** Runs a durable-run operation, turning its `PtcError`s into the HTTP errors that say the same. */
export async function asHttp<T>(tenant: TenantScope, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw httpErrorOf(error, tenant);
  }
}

/** A durable-run `PtcError` as the HTTP error that says the same, naming the ids the client sent (never the stored ones); any other error as is. */
export function httpErrorOf(error: unknown, tenant: TenantScope): unknown {
  if (!(error instanceof PtcError)) return error;
  const message = tenant.outerMessage(error.message);
  switch (error.code) {
    case 'RUN_NOT_FOUND':
      return new HttpError('RUN_NOT_FOUND', message);
    case 'RUN_NOT_PAUSED':
      return new HttpError('RUN_NOT_PAUSED', message);
    case 'JOURNAL_CORRUPT':
      return new HttpError('JOURNAL_CORRUPT', message);
    case 'INVALID_ARGS':
      return new HttpError('INVALID_REQUEST', message);
    default:
      return error;
  }
}
