/**
 * The routes that dispatch: POST /v1/run, POST /v1/tools/:name, and
 * DELETE /v1/runs/:callId.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JsonValue } from '../src/json.ts';
import { executeCall, type CallResponse } from './call-runner.ts';
import { HttpError, errorBody } from './http-errors.ts';
import type { RunKind } from './metrics.ts';
import type { PtcPluginOptions } from './plugin.ts';
import { CANCEL_SCHEMA, RUN_SCHEMA, RUN_STATUS_SCHEMA, TOOL_CALL_SCHEMA } from './route-schemas.ts';
import type { RunLedger, RunState } from './run-ledger.ts';
import type { RunTracker } from './run-tracker.ts';
import { openEventStream } from './sse.ts';
import { outboundFull, type Outbound } from './outbound.ts';
import { tenantOf } from './tenancy.ts';

interface RunBody {
  code: string;
  description?: string;
  sessionId?: string;
  callId?: string;
  timeoutMs?: number;
}
interface ToolCallBody {
  arguments?: { [key: string]: JsonValue };
  sessionId?: string;
  callId?: string;
}

interface CallInput {
  kind: RunKind;
  name: string;
  arguments: unknown;
  sessionId?: string;
  callId?: string;
}

/** Sessions without an explicit id share this one. */
export const DEFAULT_SESSION_ID = 'default';

export function registerCallRoutes(app: FastifyInstance, options: PtcPluginOptions & { runs: RunTracker; ledger: RunLedger; outbound: Outbound }): void {
  const { runs, ledger, outbound } = options;
  const limits = options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit };

  app.post('/v1/run', { schema: RUN_SCHEMA, ...limits }, (request, reply) => {
    const body = request.body as RunBody;
    const args: { [key: string]: JsonValue } = { code: body.code, description: body.description ?? 'HTTP run' };
    if (body.timeoutMs !== undefined) args.timeoutMs = body.timeoutMs;
    return serveCall(request, reply, { kind: 'code', name: 'run_code', arguments: args, sessionId: body.sessionId, callId: body.callId });
  });

  app.post('/v1/tools/:name', { schema: TOOL_CALL_SCHEMA, ...limits }, (request, reply) => {
    const body = (request.body ?? {}) as ToolCallBody;
    const { name } = request.params as { name: string };
    return serveCall(request, reply, { kind: 'tool', name, arguments: body.arguments ?? {}, sessionId: body.sessionId, callId: body.callId });
  });

  app.delete('/v1/runs/:callId', { schema: CANCEL_SCHEMA }, async (request, reply) => {
    const { callId } = request.params as { callId: string };
    // Only the caller's tenant's runs can be named: its prefix is always prepended.
    const stored = tenantOf(request).inner(callId, 'callId');
    // Not here: the replica running it (if any) is told through the database.
    const cancelled = runs.cancel(stored, `cancelled by DELETE /v1/runs/${callId}`) || (await databaseCall(() => ledger.cancelElsewhere(stored)));
    if (!cancelled) {
      throw new HttpError('RUN_NOT_FOUND', `no call with callId "${callId}" is running: it already ended or never started`);
    }
    return reply.code(202).send({ callId, cancelled: true });
  });

  app.get('/v1/runs/:callId', { schema: RUN_STATUS_SCHEMA }, async (request) => {
    const { callId } = request.params as { callId: string };
    const tenant = tenantOf(request);
    const record = await databaseCall(() => ledger.get(tenant.inner(callId, 'callId')));
    if (record === undefined) throw new HttpError('RUN_NOT_FOUND', `no call with callId "${callId}" is known: it never started, or (without a database) ran on another replica or before a restart`);
    return { ...record, callId, sessionId: tenant.outer(record.sessionId) };
  });

  /**
   * While session logs cannot be written, a run is refused at once rather
   * than run with its events lost; the sink's probe (at most once a second)
   * lets runs in again as soon as a write as large as the failed one fits.
   */
  async function assertStorageWritable(): Promise<void> {
    const { sessions } = options;
    if (sessions.writeState === undefined || sessions.writeState().ok) return;
    const state = (await sessions.health?.()) ?? sessions.writeState();
    if (state.ok) return;
    throw new HttpError(
      'STORAGE_UNAVAILABLE',
      `session logs cannot be written (${state.code}), so this run would not be recorded: free disk space or fix the data folder, then retry after the Retry-After seconds`,
      { 'retry-after': '5' },
    );
  }

  /** Runs a ledger call; a database failure becomes 503 DATABASE_UNAVAILABLE. */
  async function databaseCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof HttpError) throw error;
      throw new HttpError('DATABASE_UNAVAILABLE', 'the shared database is unreachable or failing: retry after the Retry-After seconds', { 'retry-after': '2' });
    }
  }

  async function serveCall(request: FastifyRequest, reply: FastifyReply, input: CallInput): Promise<CallResponse | FastifyReply> {
    if (options.isShuttingDown?.() === true) {
      throw new HttpError('NOT_READY', 'the server is shutting down and takes no new calls: retry against a running instance');
    }
    // Stored ids carry the tenant's prefix; responses and streams show the client's ids.
    const tenant = tenantOf(request);
    const callId = input.callId ?? randomUUID();
    const sessionId = tenant.inner(input.sessionId ?? DEFAULT_SESSION_ID, 'sessionId');
    // A run's response may be megabytes: none starts while clients hold the outbound cap unread.
    if (outbound.full()) throw outboundFull();
    if (options.databaseAvailable?.() === false) {
      throw new HttpError('DATABASE_UNAVAILABLE', 'the shared database is unreachable, so this run could not be recorded: retry after the Retry-After seconds', { 'retry-after': '2' });
    }
    const run = runs.begin(tenant.inner(callId, 'callId'), request.ip, callId);
    let state: Exclude<RunState, 'running' | 'lost'> = 'failed';
    let recorded = false;
    const onClose = () => {
      if (!reply.raw.writableFinished) run.cancel('the client closed the connection');
    };
    reply.raw.on('close', onClose);
    if (request.raw.destroyed || request.socket.destroyed) onClose();
    const call = { kind: input.kind, name: input.name, arguments: input.arguments, sessionId, run };
    try {
      // After the close listener above: awaiting earlier would miss a client that leaves meanwhile.
      await assertStorageWritable();
      // A tenant's sessions share its prefix (tenant.inner of an empty id); without tenants every session counts.
      const { retention } = options;
      if (retention !== undefined) await databaseCall(() => retention.admit(sessionId, tenant.name === undefined ? '' : tenant.inner('', 'sessionId')));
      if (!(await databaseCall(() => ledger.started({ callId: run.callId, sessionId, name: input.name })))) {
        throw new HttpError('CALL_ID_IN_USE', `a call with callId "${callId}" is already running on another replica: use a fresh callId or omit it`);
      }
      recorded = true;
      if (!acceptsEventStream(request)) {
        const body = tenant.response(await executeCall(options, call));
        state = endState(body, run.signal);
        if (isBusy(body)) {
          throw new HttpError('SANDBOX_BUSY', 'the sandbox had no memory headroom for the run in time and nothing of the program ran: retry after the Retry-After seconds', {
            'retry-after': BUSY_RETRY_AFTER_SECONDS,
          });
        }
        return body;
      }
      const stream = openEventStream(reply, outbound);
      let liveLines = 0;
      try {
        const body = await executeCall(options, call, {
          onEvent(event) {
            // ptc-dispatch-start, ptc-dispatch, and `context` for an agent/context (an inject while the run goes on).
            if (event.type === 'agent/context') stream.send('context', tenant.event(event));
            else if (event.type !== 'tool/result') stream.send(event.type.slice('tool/'.length), tenant.event(event));
          },
          onLog(line) {
            liveLines++;
            stream.send('log', { line });
          },
        });
        state = endState(body, run.signal);
        // Recorded before the result is sent, so a GET /v1/runs/:callId right after sees the end.
        recorded = false;
        await ledger.ended(run.callId, state);
        // Without a log router the lines arrive with the result.
        if (liveLines === 0) for (const line of logsOf(body)) if (!stream.send('log', { line })) await stream.room();
        // The result may be larger than a connection may hold unsent: it goes as the client takes it.
        await stream.sendPaced('result', tenant.response(body));
      } catch (error) {
        request.log.error({ err: error, callId: run.callId }, 'streamed call failed');
        stream.send('error', errorBody(500, 'INTERNAL', 'internal error: the server log has the details'));
      } finally {
        stream.end();
      }
      return reply;
    } finally {
      if (recorded) await ledger.ended(run.callId, state);
      options.retention?.ran(sessionId);
      run.end();
      reply.raw.off('close', onClose);
    }
  }
}

function endState(body: CallResponse, signal: AbortSignal): 'ok' | 'failed' | 'cancelled' {
  if (!body.isError) return 'ok';
  return signal.aborted ? 'cancelled' : 'failed';
}

function acceptsEventStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return typeof accept === 'string' && accept.includes('text/event-stream');
}

/** Retry-After of a `busy` 503, seconds: runs waiting on tools free headroom within about this long. */
const BUSY_RETRY_AFTER_SECONDS = '1';

/**
 * The run never started: the sandbox refused it `busy` (its queue was full,
 * or no memory headroom freed within the queue timeout). The one place that
 * reads the failure kind for the 503 decision.
 */
function isBusy(body: CallResponse): boolean {
  return body.isError && body.error?.info?.code === 'CODE_RUN_FAILED' && body.error.info.kind === 'busy';
}

function logsOf(body: CallResponse): string[] {
  const value = body.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const logs = value.logs;
  return Array.isArray(logs) ? logs.filter((line): line is string => typeof line === 'string') : [];
}
