/**
 * The service's API as the page uses it: every call carries the bearer token
 * kept in sessionStorage (never in a URL); a 401 announces "token required".
 */
const TOKEN_KEY = 'ptc.playground.token';

/** Fires `token-required` on a 401 and `token-accepted` on the next success. */
export const authEvents = new EventTarget();

export function getToken(): string {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(token: string): void {
  if (token === '') sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** The service's error body. */
export interface ApiErrorBody {
  statusCode: number;
  code: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function api(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = getToken();
  if (token !== '') headers.set('authorization', `Bearer ${token}`);
  const response = await fetch(path, { ...init, headers, credentials: 'omit' });
  if (response.status === 401) authEvents.dispatchEvent(new Event('token-required'));
  else if (response.ok) authEvents.dispatchEvent(new Event('token-accepted'));
  return response;
}

/** Throws an ApiError with the service's code and message unless the response is 2xx/304. */
export async function ensureOk(response: Response): Promise<Response> {
  if (response.ok || response.status === 304) return response;
  const body = (await response.json().catch(() => null)) as Partial<ApiErrorBody> | null;
  throw new ApiError(response.status, body?.code ?? `HTTP_${response.status}`, body?.message ?? response.statusText);
}

export interface SseEvent {
  event: string;
  data: unknown;
}

/** Parses a `text/event-stream` body as it arrives (POST streams cannot use EventSource). */
export async function* readEventStream(response: Response): AsyncGenerator<SseEvent> {
  if (response.body === null) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(line.startsWith('data: ') ? 6 : 5);
      }
      if (data !== '') yield { event, data: JSON.parse(data) as unknown };
    }
  }
}

/** A random id for callId: crypto.randomUUID needs a secure context, getRandomValues does not. */
export function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
