/**
 * The routes that dispatch: POST /v1/run, POST /v1/tools/:name, POST
 * /v1/runs/:callId/decision (which resumes a paused run), and DELETE
 * /v1/runs/:callId; and GET /v1/runs/:callId.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JsonValue } from '../src/json.ts';
import { executeCall, type CallResponse } from './call-runner.ts';
import { HttpError, errorBody } from './http-errors.ts';
import type { RunKind } from './metrics.ts';
import type { PtcPluginOptions } from './plugin.ts';
import { DEFAULT_EVENT_DETAIL, withEventDetail, type DetailedCallResponse, type EventDetail } from './response-events.ts';
import { CANCEL_SCHEMA, DECISION_SCHEMA, RUN_SCHEMA, RUN_STATUS_SCHEMA, TOOL_CALL_SCHEMA } from './route-schemas.ts';
import { asHttp, durableControls, httpErrorOf } from './routes-approvals.ts';
import type { ToolExecutionResult } from '../src/tool.ts';
import type { CodeModeToolResult } from '../src/code-mode/code-mode.ts';
import type { RunLedger, RunState } from './run-ledger.ts';
import type { RunTracker } from './run-tracker.ts';
import { openEventStream } from './sse.ts';
import { outboundFull, type Outbound } from './outbound.ts';
import { admitRunStorage } from './storage-admission.ts';
import { clientKeyOf, tenantOf } from './tenancy.ts';
import { incomingTrace } from './trace-context.ts';

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
  /** How much of the call's events the response carries; default all of them. */
  eventDetail?: EventDetail;
  /**
   * Runs the call instead of dispatching `name` (a decision resuming a paused run). The run is
   * recorded in the ledger only when it calls `record`: a decision does once it has claimed the
   * run, so a losing one leaves the winner's record alone.
   */
  dispatch?(signal: AbortSignal, record: () => Promise<void>): Promise<ToolExecutionResult>;
}

interface DecisionBody {
  decision: 'approve' | 'deny';
  reason?: string;
  by?: string;
}

/** Sessions without an explicit id share this one. */
export const DEFAULT_SESSION_ID = 'default';

export function registerCallRoutes(app: FastifyInstance, options: PtcPluginOptions & { runs: RunTracker; ledger: RunLedger; outbound: Outbound }): void {
  const { runs, ledger, outbound } = options;
  const limits = options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit };
  const durable = durableControls(options);

  app.post('/v1/run', { schema: RUN_SCHEMA, ...limits }, (request, reply) => {
    const body = request.body as RunBody;
    const args: { [key: string]: JsonValue } = { code: body.code, description: body.description ?? 'HTTP run' };
    if (body.timeoutMs !== undefined) args.timeoutMs = body.timeoutMs;
    const { events } = request.query as { events?: EventDetail };
    const eventDetail = events ?? DEFAULT_EVENT_DETAIL;
    return serveCall(request, reply, { kind: 'code', name: 'run_code', arguments: args, sessionId: body.sessionId, callId: body.callId, eventDetail });
  });

  app.post('/v1/tools/:name', { schema: TOOL_CALL_SCHEMA, ...limits }, (request, reply) => {
    const body = (request.body ?? {}) as ToolCallBody;
    const { name } = request.params as { name: string };
    return serveCall(request, reply, { kind: 'tool', name, arguments: body.arguments ?? {}, sessionId: body.sessionId, callId: body.callId });
  });

  // The run's session, found before the handler: it serves the call at once, as POST /v1/run does, so that it watches the connection from the start.
  const decidedSessions = new WeakMap<FastifyRequest, string>();
  const findPausedRun = async (request: FastifyRequest): Promise<void> => {
    const { callId } = request.params as { callId: string };
    // Checked before a stream opens, so the common refusals are plain 404/409 answers; the claim inside `decide` is the real arbiter.
    const tenant = tenantOf(request);
    const status = await asHttp(tenant, () => durable().durableStatus(tenant.inner(callId, 'callId')));
    if (status === undefined) throw new HttpError('RUN_NOT_FOUND', `no paused run has callId "${callId}"`);
    if (status.status !== 'paused') throw new HttpError('RUN_NOT_PAUSED', `run "${callId}" is ${status.status}, not waiting for a decision; nothing was changed`);
    decidedSessions.set(request, status.sessionId);
  };

  app.post('/v1/runs/:callId/decision', { schema: DECISION_SCHEMA, preHandler: findPausedRun, ...limits }, (request, reply) => {
    const { callId } = request.params as { callId: string };
    const body = request.body as DecisionBody;
    const tenant = tenantOf(request);
    const stored = tenant.inner(callId, 'callId');
    const controls = durable();
    const sessionId = decidedSessions.get(request)!;
    const by = body.by ?? tenant.name;
    const decision = { decision: body.decision, ...(body.reason === undefined ? {} : { reason: body.reason }), ...(by === undefined ? {} : { by }) };
    return serveCall(request, reply, {
      kind: 'code',
      name: 'run_code',
      arguments: undefined,
      sessionId: tenant.outer(sessionId),
      callId,
      dispatch: async (signal, record) => {
        try {
          return asExecutionResult(await controls.decide(stored, decision, { signal, claimed: record }));
        } catch (error) {
          throw httpErrorOf(error, tenant);
        }
      },
    }).catch((error: unknown) => {
      // Another decision is resuming this run here right now: the run is no longer paused.
      if (error instanceof HttpError && error.code === 'CALL_ID_IN_USE') {
        throw new HttpError('RUN_NOT_PAUSED', `run "${callId}" is being resumed by another decision; nothing was changed`);
      }
      throw error;
    });
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
    const stored = tenant.inner(callId, 'callId');
    const record = await databaseCall(() => ledger.get(stored));
    // A paused run is told by its journal, which outlives a restart (and the ledger's memory).
    const paused = record?.state === 'running' || options.codeMode.durableStatus === undefined ? undefined : await asHttp(tenant, () => durable().durableStatus(stored));
    if (paused?.status === 'paused') {
      return {
        callId,
        sessionId: tenant.outer(paused.sessionId),
        state: 'paused',
        replica: record?.replica ?? ledger.replica,
        startedAt: record?.startedAt ?? new Date(paused.pausedAt).toISOString(),
        endedAt: new Date(paused.pausedAt).toISOString(),
        pending: paused.pending,
        expiresAt: new Date(paused.expiresAt).toISOString(),
      };
    }
    if (record === undefined) throw new HttpError('RUN_NOT_FOUND', `no call with callId "${callId}" is known: it never started, or (without a database) ran on another replica or before a restart`);
    return { ...record, callId, sessionId: tenant.outer(record.sessionId) };
  });

  /** Runs a ledger call; a database failure becomes 503 DATABASE_UNAVAILABLE. */
  async function databaseCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof HttpError) throw error;
      throw new HttpError('DATABASE_UNAVAILABLE', 'the shared database is unreachable or failing: retry after the Retry-After seconds', { 'retry-after': '2' });
    }
  }

  async function serveCall(request: FastifyRequest, reply: FastifyReply, input: CallInput): Promise<DetailedCallResponse | FastifyReply> {
    if (options.isShuttingDown?.() === true) {
      throw new HttpError('NOT_READY', 'the server is shutting down and takes no new calls: retry against a running instance');
    }
    // Stored ids carry the tenant's prefix; responses and streams show the client's ids.
    const tenant = tenantOf(request);
    const respond = (body: CallResponse): DetailedCallResponse => withEventDetail(tenant.response(body), input.eventDetail ?? 'full');
    const callId = input.callId ?? randomUUID();
    const sessionId = tenant.inner(input.sessionId ?? DEFAULT_SESSION_ID, 'sessionId');
    // A run's response may be megabytes: none starts while clients hold the outbound cap unread.
    if (outbound.full()) throw outboundFull();
    if (options.databaseAvailable?.() === false) {
      throw new HttpError('DATABASE_UNAVAILABLE', 'the shared database is unreachable, so this run could not be recorded: retry after the Retry-After seconds', { 'retry-after': '2' });
    }
    const run = runs.begin(tenant.inner(callId, 'callId'), clientKeyOf(request), callId);
    let state: Exclude<RunState, 'running' | 'lost'> = 'failed';
    let recorded = false;
    const onClose = () => {
      if (!reply.raw.writableFinished) run.cancel('the client closed the connection');
    };
    reply.raw.on('close', onClose);
    // A request whose body was read in full is destroyed by Node once read; only its socket's end means the client left.
    if ((request.raw.destroyed && !request.raw.complete) || request.socket.destroyed) onClose();
    const record = async (): Promise<void> => {
      if (!(await databaseCall(() => ledger.started({ callId: run.callId, sessionId, name: input.name })))) {
        throw new HttpError('CALL_ID_IN_USE', `a call with callId "${callId}" is already running on another replica: use a fresh callId or omit it`);
      }
      recorded = true;
    };
    const { dispatch } = input;
    const trace = incomingTrace(request.headers.traceparent, request.headers.tracestate, tenant.name);
    const call = {
      kind: input.kind,
      name: input.name,
      arguments: input.arguments,
      sessionId,
      run,
      ...(dispatch === undefined ? {} : { dispatch: (signal: AbortSignal) => dispatch(signal, record) }),
      ...(trace === undefined ? {} : { trace }),
    };
    try {
      // After the close listener above: awaiting earlier would miss a client that leaves meanwhile.
      await admitRunStorage(options, sessionId, tenant, databaseCall);
      if (dispatch === undefined) await record();
      if (!acceptsEventStream(request)) {
        const body = await executeCall(options, call);
        state = endState(body, run.signal);
        const busy = busyRefusal(body);
        if (busy !== undefined) throw busy;
        return respond(body);
      }
      const stream = openEventStream(reply, outbound);
      let liveLines = 0;
      try {
        const body = await executeCall(options, call, {
          onEvent(event) {
            // ptc-dispatch-start, ptc-dispatch, `context` for an agent/context (an inject while the run goes on),
            // `approval/requested` for run/paused, and run/resumed, run/reverted under their own names.
            if (event.type === 'agent/context') stream.send('context', tenant.event(event));
            else if (event.type === 'run/paused') stream.send('approval/requested', tenant.event(event));
            else if (event.type === 'run/resumed' || event.type === 'run/reverted') stream.send(event.type, tenant.event(event));
            else if (event.type !== 'tool/result') stream.send(event.type.slice('tool/'.length), tenant.event(event));
          },
          onLog(line) {
            liveLines++;
            stream.send('log', { line });
          },
        });
        state = endState(body, run.signal);
        // Recorded before the result is sent, so a GET /v1/runs/:callId right after sees the end.
        if (recorded) {
          recorded = false;
          await ledger.ended(run.callId, state);
        }
        // Without a log router the lines arrive with the result.
        if (liveLines === 0) for (const line of logsOf(body)) if (!stream.send('log', { line })) await stream.room();
        // The result may be larger than a connection may hold unsent: it goes as the client takes it.
        await stream.sendPaced('result', respond(body));
      } catch (error) {
        if (error instanceof HttpError) stream.send('error', errorBody(error.statusCode, error.code, error.message));
        else {
          request.log.error({ err: error, callId: run.callId }, 'streamed call failed');
          stream.send('error', errorBody(500, 'INTERNAL', 'internal error: the server log has the details'));
        }
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
 * The 503 for a run that never started because the sandbox refused it
 * `busy`, naming what it lacked; undefined for any other outcome. The one
 * place that reads the failure kind for the 503 decision.
 */
function busyRefusal(body: CallResponse): HttpError | undefined {
  const info = body.isError ? body.error?.info : undefined;
  if (info?.code !== 'CODE_RUN_FAILED' || info.kind !== 'busy') return undefined;
  const headers = { 'retry-after': BUSY_RETRY_AFTER_SECONDS };
  const nothingRan = 'nothing of the program ran: retry after the Retry-After seconds';
  switch (info.busy) {
    case 'compute':
      return new HttpError('NO_COMPUTE_SLOT', `every compute slot stayed held by runs computing while the queue stood still, so ${nothingRan}`, headers);
    case 'queue-full':
      return new HttpError('QUEUE_FULL', `the sandbox's wait queue was full, so ${nothingRan}`, headers);
    case 'starting':
      return new HttpError('NOT_READY', `the sandbox did not become ready in time, so ${nothingRan}`, headers);
    case 'closed':
      return new HttpError('NOT_READY', 'the sandbox is shutting down and nothing of the program ran: retry against a running instance');
    default:
      return new HttpError('SANDBOX_BUSY', `the sandbox had no memory headroom for the run in time, so ${nothingRan}`, headers);
  }
}

function logsOf(body: CallResponse): string[] {
  const value = body.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const logs = value.logs;
  return Array.isArray(logs) ? logs.filter((line): line is string => typeof line === 'string') : [];
}

/** A decision's outcome as the call runner takes results: what `decide` resolved, without its contexts (the events carry them). */
export function asExecutionResult(result: CodeModeToolResult): ToolExecutionResult {
  if (result.isError) return { isError: true, content: result.content, error: result.error ?? { message: 'the resumed run failed' } };
  return { isError: false, content: result.content, value: (result.value ?? { logs: [] }) as unknown as JsonValue };
}
