/**
 * One operation call made on the host with undici: the URL, query and headers
 * built from the arguments, the configured headers added last, bounded
 * retries on 429/503 after `Retry-After`, a response size cap, and failures
 * that quote the method, the path and a short excerpt of the body, never a
 * header.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { PtcError } from '../errors.ts';
import type { JsonObject, JsonValue } from '../json.ts';
import type { OperationPlan } from './operations.ts';
import type { ToolSourceMessage } from '../tracing.ts';

export interface RequestSettings {
  baseUrl: string;
  /** The configured headers, `${env:…}` already expanded. */
  headers: Readonly<Record<string, string>>;
  maxResponseBytes: number;
  retries: number;
  /** From {@link httpClient}. */
  client: Dispatcher;
}

/** A non-JSON success: its text and content type. */
export interface TextResponse {
  contentType: string;
  text: string;
}

/** Characters of a failed response's body quoted in the failure. */
const EXCERPT_CHARS = 300;
/** Longest wait a `Retry-After` is honoured for; a longer one fails the call at once, ms. */
const MAX_RETRY_AFTER_MS = 60_000;

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\b/i;
/** What fetch asked for, and what the client's decompression reads. */
const ACCEPT_ENCODING = 'gzip, deflate, br';

/** Where Node's own fetch finds its dispatcher. */
const NODE_FETCH_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

let client: Promise<Dispatcher> | undefined;

/**
 * The HTTP client every OpenAPI source shares, loaded on first use. Its idle
 * keep-alive sockets are unref'd, so it holds no process open and is never
 * closed; the definitions `openApiTools` returns have no close to do it in.
 */
export function httpClient(): Promise<Dispatcher> {
  client ??= loadClient();
  return client;
}

async function loadClient(): Promise<Dispatcher> {
  const slots = globalThis as unknown as Record<symbol, unknown>;
  const nodeFetchDispatcher = slots[NODE_FETCH_DISPATCHER];
  const { Agent, EnvHttpProxyAgent, interceptors } = await import('undici');
  // Loading undici points Node's own fetch at undici's agent, for the whole host process: keep the host's fetch as it was.
  slots[NODE_FETCH_DISPATCHER] = nodeFetchDispatcher;
  // HTTP/1.1 as fetch spoke it, through the proxy fetch would take; bodies decompressed as fetch did, failures' too (their excerpt is quoted).
  const agent = envProxyOn() ? new EnvHttpProxyAgent({ allowH2: false }) : new Agent({ allowH2: false });
  return agent.compose(interceptors.decompress({ skipErrorResponses: false }));
}

/** Whether Node's fetch takes its proxy from `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY`. */
function envProxyOn(): boolean {
  if (process.env.NODE_USE_ENV_PROXY === '1') return true;
  return [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].includes('--use-env-proxy');
}

/** `trace`, while a tracer listens: its carrier's headers go on the request, and it learns the status. */
export async function callOperation(
  plan: OperationPlan,
  args: JsonObject,
  settings: RequestSettings,
  signal: AbortSignal,
  trace?: ToolSourceMessage,
): Promise<JsonValue | TextResponse> {
  const { url, shown } = buildUrl(plan, args, settings.baseUrl);
  // Names lower-cased, so a later header replaces an earlier one of the same name whatever its case.
  const headers: Record<string, string> = {
    accept: plan.response.kind === 'text' ? `${plan.response.mediaType}, */*;q=0.5` : 'application/json, */*;q=0.5',
    'accept-encoding': ACCEPT_ENCODING,
  };
  for (const p of plan.parameters) {
    const value = args[p.key];
    if (p.in === 'header' && value !== undefined && value !== null) headers[p.name.toLowerCase()] = scalarText(value);
  }
  let body: string | undefined;
  if (plan.body !== undefined && args[plan.body.key] !== undefined) {
    const value = args[plan.body.key]!;
    headers['content-type'] = plan.body.mediaType;
    body = plan.body.mediaType === 'application/json' ? JSON.stringify(value) : formBody(value);
  }
  if (trace !== undefined) for (const [name, value] of Object.entries(trace.carrier)) headers[name.toLowerCase()] = value;
  // Last, so neither an argument nor the spec can replace a configured credential.
  for (const [name, value] of Object.entries(settings.headers)) headers[name.toLowerCase()] = value;

  const what = `${plan.method.toUpperCase()} ${shown}`;
  const outgoing: Outgoing = { method: plan.method.toUpperCase() as Dispatcher.HttpMethod, headers, body, signal };
  for (let attempt = 0; ; attempt++) {
    let answer: Answer;
    try {
      answer = await followSameOrigin(settings.client, url, outgoing, settings.maxResponseBytes, what);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof PtcError) throw error;
      throw new PtcError('TOOL_FAILED', `${what}: the request failed (${networkReason(error)}); the API may be down or unreachable from the host`);
    }
    const { status, text } = answer;
    if (trace !== undefined) trace.status = status;
    if ((status === 429 || status === 503) && attempt < settings.retries) {
      const delay = retryDelayMs(headerOf(answer, 'retry-after') ?? null, attempt);
      if (delay !== undefined) {
        await wait(delay, signal);
        continue;
      }
    }
    const contentType = headerOf(answer, 'content-type') ?? '';
    if (status < 200 || status > 299) {
      const excerpt = text.replace(/\s+/g, ' ').trim().slice(0, EXCERPT_CHARS);
      throw new PtcError(
        httpCode(status),
        `${what} answered ${status}${answer.statusText === '' ? '' : ` ${answer.statusText}`}${excerpt === '' ? '' : `: ${excerpt}${text.length > EXCERPT_CHARS ? '…' : ''}`}`,
        { status },
      );
    }
    if (plan.response.kind === 'text') return { contentType, text };
    if (text.trim() === '') return null;
    if (JSON_TYPE.test(contentType) || plan.response.kind === 'json') {
      try {
        return JSON.parse(text) as JsonValue;
      } catch {
        if (JSON_TYPE.test(contentType)) throw new PtcError('TOOL_FAILED', `${what} answered ${status} with a body that is not valid JSON`);
      }
    }
    return { contentType, text };
  }
}

/** Redirects followed for one request. */
const MAX_REDIRECTS = 5;

interface Outgoing {
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal;
}

/** A response, its body read as text. */
interface Answer {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * One request, following redirects only within the URL's origin: following
 * them elsewhere would carry the configured headers to any host a response
 * points at.
 */
async function followSameOrigin(client: Dispatcher, url: URL, init: Outgoing, maxBytes: number, what: string): Promise<Answer> {
  let target = url;
  for (let hops = 0; ; hops++) {
    const answer = await exchange(client, target, init, maxBytes, what);
    const location = headerOf(answer, 'location');
    if (answer.status < 300 || answer.status > 399 || location === undefined) return answer;
    const next = new URL(location, target);
    if (next.origin !== url.origin) throw new PtcError('TOOL_FAILED', `${what} redirected to another origin (${next.origin}); not followed, so the configured headers stay with the API`);
    if (hops >= MAX_REDIRECTS) throw new PtcError('TOOL_FAILED', `${what}: more than ${MAX_REDIRECTS} redirects`);
    // 303, and 301/302 after a POST, turn into a GET without a body, as browsers do.
    if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && init.method === 'POST')) {
      const { 'content-type': _type, ...headers } = init.headers;
      init = { ...init, method: 'GET', headers, body: undefined };
    }
    target = next;
  }
}

/**
 * One exchange through the client's dispatch API, the body gathered as it
 * arrives and stopped past `maxBytes` (declared or streamed); a redirect's
 * body is dropped. The request API would wrap the body in a stream, which
 * costs more than a small response's whole exchange.
 */
function exchange(client: Dispatcher, target: URL, init: Outgoing, maxBytes: number, what: string): Promise<Answer> {
  const { signal } = init;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    // Rejected at once; a request still waiting for its connection is stopped when it starts.
    const onAbort = () => {
      reject(signal.reason);
      controller?.abort(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const answer: Answer = { status: 0, statusText: '', headers: {}, text: '' };
    const chunks: Buffer[] = [];
    let size = 0;
    let keep = true;
    const stop = (dispatch: Dispatcher.DispatchController) => {
      const error = tooLarge(what, maxBytes);
      reject(error);
      dispatch.abort(error);
    };
    client.dispatch(
      { origin: target.origin, path: target.pathname + target.search, method: init.method, headers: init.headers, body: init.body ?? null },
      {
        onRequestStart(dispatch) {
          controller = dispatch;
          if (signal.aborted) dispatch.abort(signal.reason as Error);
        },
        onResponseStart(dispatch, status, headers, statusText) {
          answer.status = status;
          answer.statusText = statusText ?? '';
          answer.headers = headers;
          keep = status < 300 || status > 399 || headers.location === undefined;
          // A HEAD's Content-Length is the size of the body a GET would get.
          const declared = init.method === 'HEAD' ? NaN : Number(headers['content-length']);
          if (keep && Number.isFinite(declared) && declared > maxBytes) stop(dispatch);
        },
        onResponseData(dispatch, chunk) {
          if (!keep) return;
          size += chunk.byteLength;
          if (size > maxBytes) stop(dispatch);
          else chunks.push(chunk);
        },
        onResponseEnd() {
          signal.removeEventListener('abort', onAbort);
          answer.text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
          resolve(answer);
        },
        onResponseError(_dispatch, error) {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      },
    );
  });
}

/** A response header's value; a repeated one joined as HTTP lists are. */
function headerOf(answer: Answer, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** `HTTP_404`: the code of a failed response (the status names it). */
function httpCode(status: number): `HTTP_${number}` {
  return `HTTP_${status}`;
}

function buildUrl(plan: OperationPlan, args: JsonObject, baseUrl: string): { url: URL; shown: string } {
  const values = new Map<string, string>();
  for (const p of plan.parameters) {
    if (p.in !== 'path') continue;
    const value = args[p.key];
    values.set(`{${p.name}}`, encodeURIComponent(value === undefined || value === null ? '' : scalarText(value)));
  }
  // Filled segment by segment: one that ends up empty or a dot segment would reach another endpoint
  // (`/items/{id}` with an empty id is `/items/`, which servers route as `/items`; `..` climbs,
  // encoded or not), past the include, exclude and approvals that named this one.
  const path = plan.path
    .split('/')
    .map((segment) => {
      if (!segment.includes('{')) return segment;
      const filled = segment.replace(/\{[^}]*\}/g, (name) => values.get(name) ?? name);
      if (filled === '' || filled === '.' || filled === '..') {
        throw new PtcError('INVALID_ARGS', `the path parameters make the segment ${JSON.stringify(segment)} of ${plan.path} ${filled === '' ? 'empty' : JSON.stringify(filled)}, which would reach another endpoint: pass non-empty values`);
      }
      return filled;
    })
    .join('/');
  const base = baseUrl.endsWith('/') ? baseUrl.slice(0, -1) : baseUrl;
  const url = new URL(base + path);
  for (const p of plan.parameters) {
    const value = args[p.key];
    if (p.in !== 'query' || value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      if (p.explode) for (const item of value) url.searchParams.append(p.name, scalarText(item));
      else url.searchParams.append(p.name, value.map(scalarText).join(','));
    } else {
      url.searchParams.append(p.name, scalarText(value));
    }
  }
  // The failure quotes the path the program asked for, never the configured base (it may carry a key).
  return { url, shown: path };
}

function scalarText(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function formBody(value: JsonValue): string {
  const form = new URLSearchParams();
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [key, item] of Object.entries(value)) if (item !== null) form.append(key, scalarText(item));
  }
  return form.toString();
}

/** The wait before a retry: `Retry-After` in seconds or as a date; else a short backoff. Undefined when it is too long to wait. */
export function retryDelayMs(retryAfter: string | null, attempt: number, now = Date.now()): number | undefined {
  let delay = 250 * 2 ** attempt;
  if (retryAfter !== null && retryAfter.trim() !== '') {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) delay = Math.max(0, seconds * 1000);
    else {
      const date = Date.parse(retryAfter);
      if (Number.isFinite(date)) delay = Math.max(0, date - now);
    }
  }
  return delay > MAX_RETRY_AFTER_MS ? undefined : delay;
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function tooLarge(what: string, maxBytes: number): PtcError {
  return new PtcError('TOOL_FAILED', `${what}: the response is larger than ${maxBytes} bytes (maxResponseBytes); ask for less (filter or page the request)`);
}

/** The failure's cause as the network layer names it (`ECONNREFUSED`, `invalid x-api-key header`); undici's errors never quote a header's value. */
function networkReason(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code === 'UND_ERR_INVALID_ARG' && typeof message === 'string') return message.split('\n', 1)[0].slice(0, 200);
  if (typeof code === 'string') return code;
  return 'network error';
}
