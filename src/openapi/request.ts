/**
 * One operation call made on the host with fetch: the URL, query and headers
 * built from the arguments, the configured headers added last, bounded
 * retries on 429/503 after `Retry-After`, a response size cap, and failures
 * that quote the method, the path and a short excerpt of the body, never a
 * header.
 */
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

/** `trace`, while a tracer listens: its carrier's headers go on the request, and it learns the status. */
export async function callOperation(
  plan: OperationPlan,
  args: JsonObject,
  settings: RequestSettings,
  signal: AbortSignal,
  trace?: ToolSourceMessage,
): Promise<JsonValue | TextResponse> {
  const { url, shown } = buildUrl(plan, args, settings.baseUrl);
  const headers = new Headers();
  headers.set('accept', plan.response.kind === 'text' ? `${plan.response.mediaType}, */*;q=0.5` : 'application/json, */*;q=0.5');
  for (const p of plan.parameters) {
    const value = args[p.key];
    if (p.in === 'header' && value !== undefined && value !== null) headers.set(p.name, scalarText(value));
  }
  let body: string | undefined;
  if (plan.body !== undefined && args[plan.body.key] !== undefined) {
    const value = args[plan.body.key]!;
    headers.set('content-type', plan.body.mediaType);
    body = plan.body.mediaType === 'application/json' ? JSON.stringify(value) : formBody(value);
  }
  if (trace !== undefined) for (const [name, value] of Object.entries(trace.carrier)) headers.set(name, value);
  // Last, so neither an argument nor the spec can replace a configured credential.
  for (const [name, value] of Object.entries(settings.headers)) headers.set(name, value);

  const what = `${plan.method.toUpperCase()} ${shown}`;
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await followSameOrigin(url, { method: plan.method.toUpperCase(), headers, ...(body === undefined ? {} : { body }), signal }, what);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof PtcError) throw error;
      throw new PtcError('TOOL_FAILED', `${what}: the request failed (${networkReason(error)}); the API may be down or unreachable from the host`);
    }
    if (trace !== undefined) trace.status = response.status;
    if ((response.status === 429 || response.status === 503) && attempt < settings.retries) {
      const delay = retryDelayMs(response.headers.get('retry-after'), attempt);
      if (delay !== undefined) {
        await response.body?.cancel().catch(() => undefined);
        await wait(delay, signal);
        continue;
      }
    }
    const text = await readCapped(response, settings.maxResponseBytes, what);
    const contentType = response.headers.get('content-type') ?? '';
    if (!response.ok) {
      const excerpt = text.replace(/\s+/g, ' ').trim().slice(0, EXCERPT_CHARS);
      throw new PtcError(
        httpCode(response.status),
        `${what} answered ${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`}${excerpt === '' ? '' : `: ${excerpt}${text.length > EXCERPT_CHARS ? '…' : ''}`}`,
        { status: response.status },
      );
    }
    if (plan.response.kind === 'text') return { contentType, text };
    if (text.trim() === '') return null;
    if (JSON_TYPE.test(contentType) || plan.response.kind === 'json') {
      try {
        return JSON.parse(text) as JsonValue;
      } catch {
        if (JSON_TYPE.test(contentType)) throw new PtcError('TOOL_FAILED', `${what} answered ${response.status} with a body that is not valid JSON`);
      }
    }
    return { contentType, text };
  }
}

/** Redirects followed for one request. */
const MAX_REDIRECTS = 5;

/**
 * fetch, following redirects only within the URL's origin: fetch would
 * carry a configured header other than Authorization to any host a
 * response points at.
 */
async function followSameOrigin(url: URL, init: RequestInit & { method: string }, what: string): Promise<Response> {
  let target = url;
  for (let hops = 0; ; hops++) {
    const response = await fetch(target, { ...init, redirect: 'manual' });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || location === null) return response;
    await response.body?.cancel().catch(() => undefined);
    const next = new URL(location, target);
    if (next.origin !== url.origin) throw new PtcError('TOOL_FAILED', `${what} redirected to another origin (${next.origin}); not followed, so the configured headers stay with the API`);
    if (hops >= MAX_REDIRECTS) throw new PtcError('TOOL_FAILED', `${what}: more than ${MAX_REDIRECTS} redirects`);
    // 303, and 301/302 after a POST, turn into a GET without a body, as browsers do.
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && init.method === 'POST')) {
      const { body: _body, ...rest } = init;
      init = { ...rest, method: 'GET' };
    }
    target = next;
  }
}

/** `HTTP_404`: the code of a failed response (the status names it). */
function httpCode(status: number): `HTTP_${number}` {
  return `HTTP_${status}`;
}

function buildUrl(plan: OperationPlan, args: JsonObject, baseUrl: string): { url: URL; shown: string } {
  let path = plan.path;
  for (const p of plan.parameters) {
    if (p.in !== 'path') continue;
    const value = args[p.key];
    const text = value === undefined || value === null ? '' : scalarText(value);
    // A dot segment would climb out of the operation's path to another endpoint (the URL parser folds it, encoded or not).
    if (text === '.' || text === '..') throw new PtcError('INVALID_ARGS', `path parameter ${JSON.stringify(p.name)} cannot be ${JSON.stringify(text)}`);
    path = path.replaceAll(`{${p.name}}`, encodeURIComponent(text));
  }
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

async function readCapped(response: Response, maxBytes: number, what: string): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(what, maxBytes);
  }
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw tooLarge(what, maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function tooLarge(what: string, maxBytes: number): PtcError {
  return new PtcError('TOOL_FAILED', `${what}: the response is larger than ${maxBytes} bytes (maxResponseBytes); ask for less (filter or page the request)`);
}

/** The failure's cause as the network layer names it (`ECONNREFUSED`, `bad port`); undici's causes never quote a header. */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string' && cause.message !== '') return cause.message.split('\n', 1)[0].slice(0, 200);
  return 'network error';
}
