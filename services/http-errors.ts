/**
 * The service's HTTP error catalogue and its one error handler. Every error
 * response is `{statusCode, code, error, message}`; no host stack or path
 * ever reaches a client. Tool failures are not here: a failed run or tool
 * call is a 200 with `isError: true` and a code from src/errors.ts.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_BODY_DEPTH } from './config-defaults.ts';

export const HTTP_ERROR_CODES = {
  INVALID_REQUEST: { status: 400, fix: 'Fix the field the message names; the OpenAPI document at /docs/json has every schema.' },
  INVALID_JSON: { status: 400, fix: 'Send a well-formed JSON body with `content-type: application/json`.' },
  BODY_TOO_DEEP: { status: 400, fix: `Send flatter JSON: arrays and objects nested at most ${MAX_BODY_DEPTH} levels (a program nests deeper in its code, a string).` },
  MALFORMED_REQUEST: { status: 400, fix: 'Send well-formed HTTP/1.1 (a valid request line and headers, and Content-Length or Transfer-Encoding, never both); the server closes the connection after this answer.' },
  UNAUTHORIZED: { status: 401, fix: 'Send `authorization: Bearer <token>` with the token the server was started with (PTC_TOKEN).' },
  FORBIDDEN_HOST: { status: 403, fix: 'Call the service by a name it answers to (bound to loopback: localhost, 127.0.0.1, [::1]), or add the name to allowedHosts.' },
  FORBIDDEN_ORIGIN: { status: 403, fix: 'Call the service from its own origin or a server-side client, or add the origin host to allowedHosts.' },
  NOT_FOUND: { status: 404, fix: 'Check the method and path against /docs/json.' },
  RUN_NOT_FOUND: { status: 404, fix: 'Nothing to cancel: the run already ended or never started under that callId.' },
  CALL_ID_IN_USE: { status: 409, fix: 'Use a fresh callId, or omit it to get a random one.' },
  RUN_NOT_PAUSED: { status: 409, fix: 'The run is not waiting for a decision (decided already, resuming, or rolled back): read it with GET /v1/runs/:callId; nothing was changed.' },
  JOURNAL_CORRUPT: { status: 500, fix: "The paused run's stored journal cannot be read; nothing ran: start the work again as a new run. Operators: see the file under <data dir>/journals." },
  REQUEST_TIMEOUT: { status: 408, fix: 'Send the headers and body within receiveTimeoutMs (30 s by default); the server closes the connection after this answer.' },
  BODY_TOO_LARGE: { status: 413, fix: 'Send a smaller body (shorter code or arguments), or raise bodyLimit in the config.' },
  PARAM_TOO_LONG: { status: 414, fix: 'Use a shorter id in the path: session and call ids are at most 128 characters, tool names at most 256.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, fix: 'Send the body as `content-type: application/json`.' },
  RATE_LIMITED: { status: 429, fix: 'Wait for the number of seconds in Retry-After, then retry.' },
  TOO_MANY_RUNS: { status: 429, fix: 'Wait for one of your runs to finish (Retry-After), or raise maxConcurrentRunsPerClient.' },
  HEADERS_TOO_LARGE: { status: 431, fix: 'Send a shorter URL and fewer or shorter headers (16 KiB together, unless Node runs with another --max-http-header-size); the server closes the connection after this answer.' },
  INTERNAL: { status: 500, fix: 'A server bug: the server log has the details.' },
  STORAGE_QUOTA: { status: 507, fix: 'The session or tenant holds its quota of session logs (retention.maxSessionBytes, retention.maxTenantBytes): start a new session, wait for old logs to expire (retention.maxAgeDays), or raise the quota.' },
  UNDER_PRESSURE: { status: 503, fix: 'The server is overloaded: retry after Retry-After seconds.' },
  SANDBOX_BUSY: { status: 503, fix: 'The sandbox had no memory headroom for the run while its queue stood still for pool.queueTimeoutMs: retry after Retry-After seconds, or raise pool.memoryBudgetMiB.' },
  NO_COMPUTE_SLOT: { status: 503, fix: 'Every compute slot (pool.maxActiveRuns) stayed held by runs computing while the queue stood still for pool.queueTimeoutMs: retry after Retry-After seconds, or raise pool.maxActiveRuns.' },
  QUEUE_FULL: { status: 503, fix: 'pool.queueLimit runs were already waiting for the sandbox: retry after Retry-After seconds, or raise pool.queueLimit.' },
  EVENT_LOG_UNAVAILABLE: { status: 503, fix: 'The session log could not be opened or read (a disk or permission fault): retry later; the server log has the cause.' },
  STORAGE_UNAVAILABLE: { status: 503, fix: 'Session logs cannot be written (a full disk, a read-only or missing data folder): free space or fix the folder; runs are taken again without a restart once a write succeeds.' },
  DATABASE_UNAVAILABLE: { status: 503, fix: 'PostgreSQL (databaseUrl) is unreachable or failing: retry after Retry-After seconds; runs resume without a restart once it is back.' },
  TOO_MANY_MCP_SESSIONS: { status: 503, fix: 'Every MCP session of yours has a call in flight and you hold maxMcpSessionsPerTenant: wait for a call to end (Retry-After), close a session, or raise the cap.' },
  TOO_MANY_CONNECTIONS: { status: 503, fix: 'Your client holds maxConnectionsPerClient open connections: reuse them (keep-alive), close some, or retry after Retry-After seconds.' },
  NOT_READY: { status: 503, fix: 'The sandbox is starting or the server is shutting down: retry shortly.' },
} as const;

export type HttpErrorCode = keyof typeof HTTP_ERROR_CODES;

/** The longest path parameter, in characters (a tool name; ids are at most 128): a longer one answers 414 `PARAM_TOO_LONG`. */
export const MAX_PATH_PARAM_LENGTH = 256;

/** Thrown by handlers and hooks; rendered by {@link sendError}. */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly code: HttpErrorCode;
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  constructor(code: HttpErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.code = code;
    this.statusCode = HTTP_ERROR_CODES[code].status;
    this.headers = headers;
  }
}

export interface ErrorBody {
  statusCode: number;
  code: string;
  error: string;
  message: string;
}

export function errorBody(statusCode: number, code: string, message: string): ErrorBody {
  return { statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message };
}

/** The JSON schema of an error response (for route schemas and OpenAPI). */
export const ERROR_RESPONSE_SCHEMA = {
  type: 'object',
  properties: {
    statusCode: { type: 'integer' },
    code: { type: 'string' },
    error: { type: 'string' },
    message: { type: 'string' },
  },
  required: ['statusCode', 'code', 'error', 'message'],
} as const;

interface AjvLikeError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** 414 `PARAM_TOO_LONG`: says what was too long without echoing it. */
export function paramTooLong(): HttpError {
  return new HttpError('PARAM_TOO_LONG', `a path parameter is longer than ${MAX_PATH_PARAM_LENGTH} characters: use a shorter id (at most 128 characters) or tool name`);
}

/** Maps any error to the catalogue; unknown errors become a bare 500 (details only in the log). */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  const e = error as Partial<FastifyError> & { validation?: AjvLikeError[]; validationContext?: string };
  if (Array.isArray(e.validation)) return new HttpError('INVALID_REQUEST', describeValidation(e.validation, e.validationContext ?? 'body'));
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpError('BODY_TOO_LARGE', 'the request body is larger than the server accepts: send a smaller body');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HttpError('UNSUPPORTED_MEDIA_TYPE', 'the body has an unsupported content type: send application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HttpError('INVALID_JSON', 'the body is empty but content-type is application/json: send a JSON object such as {"code": "return 1"}');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new HttpError('INVALID_JSON', 'the body is not valid JSON: send one JSON object');
    // The router's own refusals (Fastify's frameworkErrors): their messages would echo the path.
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return paramTooLong();
    case 'FST_ERR_BAD_URL':
      return new HttpError('INVALID_REQUEST', 'the path has an invalid percent-encoding: encode each path segment with encodeURIComponent');
  }
  if (e.statusCode === 400 && error instanceof SyntaxError) {
    return new HttpError('INVALID_JSON', 'the body is not valid JSON: send one JSON object');
  }
  if (e.statusCode === 404) return new HttpError('NOT_FOUND', 'no such route: check the method and path against /docs/json');
  if (e.statusCode === 503) return new HttpError('NOT_READY', 'the server is not accepting requests right now: retry shortly');
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return Object.assign(new HttpError('INVALID_REQUEST', typeof e.message === 'string' ? e.message : 'bad request'), {
      statusCode: e.statusCode,
    });
  }
  return new HttpError('INTERNAL', 'internal error: the server log has the details');
}

/** `body.sessionId must match ...`, `body has unknown field "x": remove it`. */
export function describeValidation(errors: AjvLikeError[], context: string): string {
  return errors
    .map((error) => {
      const where = context + error.instancePath.replaceAll('/', '.');
      switch (error.keyword) {
        case 'required':
          return `${where}.${String(error.params.missingProperty)} is required`;
        case 'additionalProperties':
          return `${where} has unknown field "${String(error.params.additionalProperty)}": remove it`;
        case 'pattern':
          return `${where} has characters that are not allowed: use 1-128 letters, digits, "_" or "-"`;
        case 'type':
          return `${where} must be ${String(error.params.type)}`;
        default:
          return `${where} ${error.message ?? 'is invalid'}`;
      }
    })
    .join('; ');
}

/** Fastify error handler: logs server faults, answers with the catalogue shape. */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const mapped = toHttpError(error);
  if (mapped.statusCode >= 500 && mapped.code === 'INTERNAL') request.log.error({ err: error }, 'request failed');
  for (const [name, value] of Object.entries(mapped.headers)) reply.header(name, value);
  const retryAfter = reply.getHeader('retry-after');
  if ((mapped.statusCode === 429 || mapped.statusCode === 503) && retryAfter === undefined) reply.header('retry-after', '1');
  return reply.code(mapped.statusCode).type('application/json; charset=utf-8').send(errorBody(mapped.statusCode, mapped.code, mapped.message));
}

/**
 * Fastify's `clientErrorHandler` (Node's 'clientError'): a request Node could
 * not parse (conflicting or malformed framing, a bad request line or header),
 * headers over the size limit, or a request not received within
 * receiveTimeoutMs. No route and no hook runs for it: it is answered here, in
 * the catalogue's shape, and the connection is closed, since the bytes that
 * follow cannot be trusted to start a request. Nothing the client sent is
 * echoed. Nothing is written when the socket is gone or a response on it has
 * begun (bytes mid-response would corrupt it), as Node itself does.
 */
export function answerClientError(error: Error & { code?: string; reason?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && inFlight?.headersSent !== true) {
    const mapped = clientErrorOf(error);
    const body = JSON.stringify(errorBody(mapped.statusCode, mapped.code, mapped.message));
    socket.write(
      `HTTP/1.1 ${mapped.statusCode} ${STATUS_CODES[mapped.statusCode]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy(error);
}

function clientErrorOf(error: { code?: string; reason?: string }): HttpError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HttpError('REQUEST_TIMEOUT', 'the request (headers and body) did not arrive within receiveTimeoutMs: send it faster, or in smaller pieces');
    case 'HPE_HEADER_OVERFLOW':
      return new HttpError('HEADERS_TOO_LARGE', 'the URL and headers are larger than the server accepts: send a shorter URL and fewer or shorter headers');
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return new HttpError('MALFORMED_REQUEST', `the request's body framing is invalid (${reasonOf(error)}): send one Content-Length, or Transfer-Encoding: chunked, never both`);
    default:
      return new HttpError('MALFORMED_REQUEST', `the request is not well-formed HTTP/1.1 (${reasonOf(error)}): fix its request line and headers`);
  }
}

/** llhttp's reason (a fixed phrase such as "Invalid method encountered"), never bytes of the request; else its code. */
function reasonOf(error: { code?: string; reason?: string }): string {
  if (typeof error.reason === 'string' && /^[A-Za-z0-9 ,.'-]{1,100}$/.test(error.reason)) return error.reason;
  return typeof error.code === 'string' && /^[A-Z0-9_]{1,64}$/.test(error.code) ? error.code : 'unparsable';
}
