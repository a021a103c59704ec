/**
 * Hostile HTTP input against a real server (port 0, temp data dir): each
 * request is a 4xx with `{statusCode, code, error, message}`, a message that
 * says what to fix, no stack and no host path; and nothing is written
 * outside the data dir. Raw node:http requests, so paths and bytes reach the
 * server exactly as written (fetch would normalise `%2e%2e`).
 */
import { STATUS_CODES, request as httpRequest } from 'node:http';
import net from 'node:net';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type Running } from '../services/helpers.ts';
import { HOST_LEAK } from './harness.ts';

interface Raw {
  status: number;
  type: string;
  body: string;
}

let running: Running;
let origin: URL;
let parent: string;
let before: string[];

function send(method: string, rawPath: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: origin.hostname, port: origin.port, method, path: rawPath, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/** Writes `bytes` on a fresh socket; resolves with everything the server sent once it closed the connection. */
function sendRaw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(origin.port), origin.hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** A raw HTTP/1.1 response: status, lower-cased headers, body. */
function parseRaw(response: string): { status: number; headers: Record<string, string>; body: string } {
  const end = response.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = response.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine!)?.[1]), headers, body: response.slice(end + 4) };
}

async function listTree(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.map((entry) => path.relative(root, path.join(entry.parentPath, entry.name))).sort();
}

const JSON_TYPE = { 'content-type': 'application/json' };
const run = (body: unknown) => JSON.stringify({ code: 'return 1', ...(body as object) });

interface BadInput {
  name: string;
  method: string;
  path: string;
  body?: Buffer | string;
  headers?: Record<string, string>;
  status: number;
  code: string;
  /** What the message must name. */
  says: RegExp;
}

const traversalIds = ['../x', '..%2Fx', '%2e%2e', '%2E%2E%2Fetc', 'a/b', 'a\\b', 'a%00b', 'a%0Ab', 'a b', 'a.b', 'ü', 'x'.repeat(129), ''];

const CASES: BadInput[] = [
  { name: 'malformed JSON', method: 'POST', path: '/v1/run', body: '{"code":', headers: JSON_TYPE, status: 400, code: 'INVALID_JSON', says: /not valid JSON/ },
  { name: 'empty JSON body', method: 'POST', path: '/v1/run', body: '', headers: JSON_TYPE, status: 400, code: 'INVALID_JSON', says: /empty/ },
  { name: 'a JSON array body', method: 'POST', path: '/v1/run', body: '[]', headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /body must be object/ },
  { name: 'wrong content type (form)', method: 'POST', path: '/v1/run', body: 'code=return+1', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', says: /application\/json/ },
  { name: 'wrong content type (text/plain)', method: 'POST', path: '/v1/run', body: 'return 1', headers: { 'content-type': 'text/plain' }, status: 400, code: 'INVALID_REQUEST', says: /body must be object/ },
  { name: 'no content type', method: 'POST', path: '/v1/run', body: '{}', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', says: /application\/json/ },
  { name: 'a body over the limit', method: 'POST', path: '/v1/run', body: run({ code: 'x'.repeat(1024 * 1024 + 1) }), headers: JSON_TYPE, status: 413, code: 'BODY_TOO_LARGE', says: /smaller body/ },
  {
    name: 'invalid UTF-8',
    method: 'POST',
    path: '/v1/run',
    body: Buffer.concat([Buffer.from('{"code":"return \''), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('\'"}')]),
    headers: JSON_TYPE,
    status: 400,
    code: 'INVALID_JSON',
    says: /UTF-8/,
  },
  { name: 'prototype pollution keys', method: 'POST', path: '/v1/run', body: '{"code":"return 1","__proto__":{"polluted":1}}', headers: JSON_TYPE, status: 400, code: 'INVALID_JSON', says: /JSON/ },
  { name: 'an unknown field', method: 'POST', path: '/v1/run', body: run({ sandbox: 'off' }), headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /unknown field "sandbox"/ },
  { name: 'code that is not a string', method: 'POST', path: '/v1/run', body: '{"code":{"x":1}}', headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /body\.code must be string/ },
  { name: 'negative timeoutMs', method: 'POST', path: '/v1/run', body: run({ timeoutMs: -1 }), headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /timeoutMs/ },
  { name: 'zero timeoutMs', method: 'POST', path: '/v1/run', body: run({ timeoutMs: 0 }), headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /timeoutMs/ },
  { name: 'huge timeoutMs', method: 'POST', path: '/v1/run', body: run({ timeoutMs: 1e12 }), headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /timeoutMs must be <= 600000/ },
  { name: 'fractional timeoutMs', method: 'POST', path: '/v1/run', body: run({ timeoutMs: 1.5 }), headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /timeoutMs must be integer/ },
  { name: 'string timeoutMs', method: 'POST', path: '/v1/run', body: run({ timeoutMs: '100' }), headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /timeoutMs must be integer/ },
  ...traversalIds
    .filter((id) => !id.includes('/') && !id.includes('%2F') && id !== '' && !id.includes('\\'))
    .map((id): BadInput => ({ name: `sessionId ${JSON.stringify(id)} in a run body`, method: 'POST', path: '/v1/run', body: run({ sessionId: decodeURIComponent(id) }), headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /sessionId/ })),
  { name: 'sessionId with a slash in a run body', method: 'POST', path: '/v1/run', body: run({ sessionId: '../../etc' }), headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /sessionId/ },
  { name: 'empty sessionId in a run body', method: 'POST', path: '/v1/run', body: run({ sessionId: '' }), headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /sessionId/ },
  { name: 'callId traversal in a run body', method: 'POST', path: '/v1/run', body: run({ callId: '../../x' }), headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /callId/ },
  { name: 'sessionId traversal in a direct tool call', method: 'POST', path: '/v1/tools/run_code', body: JSON.stringify({ arguments: { code: 'return 1' }, sessionId: '..' }), headers: JSON_TYPE, status: 400, code: 'INVALID_REQUEST', says: /sessionId/ },
  ...['..%2Fx', '%2e%2e%2F%2e%2e%2Fetc', 'a%00b', 'a%0Ab', 'a%20b', 'a.b', 'x'.repeat(129)].map(
    (id): BadInput => ({ name: `GET /v1/sessions/${id.slice(0, 24)}/events`, method: 'GET', path: `/v1/sessions/${id}/events`, status: 400, code: 'INVALID_REQUEST', says: /params\.id/ }),
  ),
  { name: 'a bad percent-encoding in the path', method: 'GET', path: '/v1/sessions/%zz/events', status: 400, code: 'INVALID_REQUEST', says: /invalid percent-encoding: encode each path segment/ },
  ...['..%2Fx', 'a%00b', '%2e%2e'].map(
    (id): BadInput => ({ name: `DELETE /v1/runs/${id}`, method: 'DELETE', path: `/v1/runs/${id}`, status: 400, code: 'INVALID_REQUEST', says: /params\.callId/ }),
  ),
];

beforeAll(async () => {
  running = await startServer();
  origin = new URL(running.url);
  parent = path.dirname(running.config.dataDir);
  // One ordinary run first, so the data dir holds what a working server writes.
  const ok = await send('POST', '/v1/run', run({ sessionId: 'baseline' }), JSON_TYPE);
  expect(ok.status).toBe(200);
  before = await listTree(parent);
});
afterAll(() => running.server.close());

describe('bad HTTP input', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, bad) => {
    const response = await send(bad.method, bad.path, bad.body, bad.headers);
    expect(response.status, response.body).toBe(bad.status);
    expect(response.type).toMatch(/^application\/json/);
    const body = JSON.parse(response.body) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['code', 'error', 'message', 'statusCode']);
    expect(body).toMatchObject({ statusCode: bad.status, code: bad.code });
    expect(body.message).toMatch(bad.says);
    expect(response.body).not.toMatch(HOST_LEAK);
    expect(response.body).not.toMatch(/\n\s+at /);
  });

  it.each([
    ['GET', `/v1/sessions/${'b'.repeat(300)}/events`],
    ['GET', `/v1/runs/${'c'.repeat(2000)}`],
    ['POST', `/v1/tools/${'t'.repeat(257)}`],
  ])('answers %s with a path parameter over 256 characters 414 PARAM_TOO_LONG, without echoing the path', async (method, rawPath) => {
    const response = await send(method, rawPath, method === 'POST' ? '{}' : undefined, method === 'POST' ? JSON_TYPE : {});
    expect(response.status, response.body).toBe(414);
    expect(response.type).toMatch(/^application\/json/);
    expect(JSON.parse(response.body)).toEqual({
      statusCode: 414,
      code: 'PARAM_TOO_LONG',
      error: 'URI Too Long',
      message: 'a path parameter is longer than 256 characters: use a shorter id (at most 128 characters) or tool name',
    });
    expect(response.body).not.toMatch(/bbbb|cccc|tttt|\/v1\//);
  });

  // Node refuses these before any route or hook runs; the answer is still the catalogue's, and the connection is closed.
  it.each([
    {
      name: 'both Transfer-Encoding and Content-Length',
      bytes: 'POST /v1/run HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n',
      status: 400,
      code: 'MALFORMED_REQUEST',
      message: "the request's body framing is invalid (Content-Length can't be present with Transfer-Encoding): send one Content-Length, or Transfer-Encoding: chunked, never both",
    },
    {
      name: 'a request line that is not HTTP',
      bytes: 'SECRET-9f2c /v1/run HTTP/1.1\r\nHost: localhost\r\n\r\n',
      status: 400,
      code: 'MALFORMED_REQUEST',
      message: 'the request is not well-formed HTTP/1.1 (Invalid method encountered): fix its request line and headers',
    },
    {
      name: 'headers over the size limit',
      bytes: `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: SECRET-9f2c${'x'.repeat(20_000)}\r\n\r\n`,
      status: 431,
      code: 'HEADERS_TOO_LARGE',
      message: 'the URL and headers are larger than the server accepts: send a shorter URL and fewer or shorter headers',
    },
  ])('answers $name in the documented shape and closes the connection', async ({ bytes, status, code, message }) => {
    const raw = await sendRaw(bytes);
    const response = parseRaw(raw);
    expect(response.status, raw).toBe(status);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers.connection).toBe('close');
    expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.body));
    expect(JSON.parse(response.body)).toEqual({ statusCode: status, code, error: STATUS_CODES[status], message });
    expect(raw).not.toContain('SECRET-9f2c');
  });

  it('a 128-character session id (the longest allowed) is written and read back', async () => {
    const id = 's'.repeat(128);
    expect((await send('POST', '/v1/run', run({ sessionId: id }), JSON_TYPE)).status).toBe(200);
    const read = await send('GET', `/v1/sessions/${id}/events`);
    expect(read.status, read.body).toBe(200);
    expect((JSON.parse(read.body) as { events: unknown[] }).events).toHaveLength(1);
  });

  it('the server still serves, and nothing was written outside the data dir', async () => {
    const ok = await send('POST', '/v1/run', run({ sessionId: 'after' }), JSON_TYPE);
    expect(ok.status).toBe(200);
    await running.server.core.sessions.flush?.('after');
    const dataDir = path.relative(parent, running.config.dataDir);
    const added = (await listTree(parent)).filter((entry) => !before.includes(entry));
    expect(added.length).toBeGreaterThan(0);
    for (const entry of added) expect(entry.startsWith(`${dataDir}${path.sep}`), entry).toBe(true);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
});
