// The request path of OpenAPI tools against a loopback server that answers what each test asks for.
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiTools } from '../../src/openapi/index.ts';
import { createToolRegistry } from '../../src/registry.ts';
import type { ToolRegistry } from '../../src/tool.ts';

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;
let server: Server;
let baseUrl: string;
let handler: Handler = (_request, response) => response.end();
const requests: { method: string; url: string; body: string; contentType?: string }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      requests.push({ method: request.method!, url: request.url!, body, ...(request.headers['content-type'] === undefined ? {} : { contentType: request.headers['content-type'] }) });
      handler(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const json = (response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) =>
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));

/** A Swagger 2.0 spec: body parameter, csv and multi query arrays, a text response. */
const swagger2 = {
  swagger: '2.0',
  info: { title: 'Shop', version: '1' },
  host: 'shop.invalid',
  basePath: '/api',
  schemes: ['https'],
  paths: {
    '/orders': {
      post: {
        operationId: 'createOrder',
        parameters: [{ in: 'body', name: 'order', required: true, schema: { $ref: '#/definitions/Order' } }],
        responses: { '201': { description: 'created', schema: { $ref: '#/definitions/Order' } } },
      },
      get: {
        operationId: 'listOrders',
        parameters: [
          { in: 'query', name: 'ids', type: 'array', items: { type: 'integer' }, collectionFormat: 'csv' },
          { in: 'query', name: 'tag', type: 'array', items: { type: 'string' }, collectionFormat: 'multi' },
        ],
        responses: { '200': { description: 'ok', schema: { type: 'array', items: { $ref: '#/definitions/Order' } } } },
      },
    },
    '/health': { get: { produces: ['text/plain'], responses: { '200': { description: 'ok', schema: { type: 'string' } } } } },
    '/orders/{id}': {
      get: { operationId: 'getOrder', parameters: [{ in: 'path', name: 'id', required: true, type: 'string' }], responses: { '200': { description: 'ok', schema: { $ref: '#/definitions/Order' } } } },
    },
  },
  definitions: { Order: { type: 'object', required: ['item'], properties: { item: { type: 'string' }, qty: { type: 'integer', minimum: 1 } } } },
};

async function registryOf(options: Partial<Parameters<typeof openApiTools>[0]> = {}): Promise<ToolRegistry> {
  const registry = createToolRegistry();
  for (const definition of await openApiTools({ name: 'shop', spec: swagger2, baseUrl: `${baseUrl}/api`, ...options })) registry.register(definition);
  return registry;
}

describe('OpenAPI requests', () => {
  it('Swagger 2.0: body parameter as body, csv and multi arrays, a non-JSON success as text with its content type', async () => {
    const registry = await registryOf();
    expect(registry.schemas().map((schema) => schema.name)).toEqual(['shop__createOrder', 'shop__getOrder', 'shop__get_health', 'shop__listOrders']);
    handler = (request, response, body) =>
      request.url === '/api/health' ? response.writeHead(200, { 'content-type': 'text/plain' }).end('all good') : json(response, request.method === 'POST' ? 201 : 200, request.method === 'POST' ? JSON.parse(body) : []);
    requests.length = 0;
    const created = await registry.dispatch({ name: 'shop__createOrder', arguments: { body: { item: 'tea', qty: 2 } } });
    expect(created.isError ? created.error : created.value).toEqual({ item: 'tea', qty: 2 });
    const listed = await registry.dispatch({ name: 'shop__listOrders', arguments: { ids: [1, 2], tag: ['a', 'b'] } });
    expect(listed.isError).toBe(false);
    const health = await registry.dispatch({ name: 'shop__get_health', arguments: {} });
    expect(health.isError ? health.error : health.value).toEqual({ contentType: 'text/plain', text: 'all good' });
    expect(requests).toEqual([
      { method: 'POST', url: '/api/orders', body: '{"item":"tea","qty":2}', contentType: 'application/json' },
      { method: 'GET', url: '/api/orders?ids=1%2C2&tag=a&tag=b', body: '' },
      { method: 'GET', url: '/api/health', body: '' },
    ]);
    const invalid = await registry.dispatch({ name: 'shop__createOrder', arguments: { body: { item: 'tea', qty: 0 } } });
    expect(invalid.isError && invalid.error.message).toMatch(/arguments\.body\.qty: must be >= 1/);
  });

  it('429 and 503 are retried after Retry-After, up to retries; then the failure is HTTP_<status>', async () => {
    const registry = await registryOf({ retries: 2 });
    let answered = 0;
    handler = (_request, response) => (++answered < 3 ? json(response, answered === 1 ? 429 : 503, { error: 'slow down' }, { 'retry-after': '0' }) : json(response, 200, []));
    const retried = await registry.dispatch({ name: 'shop__listOrders', arguments: {} });
    expect(retried.isError).toBe(false);
    expect(answered).toBe(3);

    answered = 0;
    handler = (_request, response) => (answered++, json(response, 429, { error: 'slow down' }, { 'retry-after': '0' }));
    const exhausted = await registry.dispatch({ name: 'shop__listOrders', arguments: {} });
    expect(answered).toBe(3);
    expect(exhausted.isError && exhausted.error.info).toEqual({ name: 'PtcError', code: 'HTTP_429', status: 429 });

    // A Retry-After too long to wait fails at once.
    answered = 0;
    handler = (_request, response) => (answered++, json(response, 503, { error: 'maintenance' }, { 'retry-after': '3600' }));
    const tooLong = await registry.dispatch({ name: 'shop__listOrders', arguments: {} });
    expect(answered).toBe(1);
    expect(tooLong.isError && tooLong.error.message).toContain('GET /orders answered 503');
  });

  it('a response over maxResponseBytes fails the call, declared or streamed', async () => {
    const registry = await registryOf({ maxResponseBytes: 1_000 });
    handler = (request, response) => {
      const rows = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ item: `row ${i}` })));
      if (request.url?.includes('tag=chunked')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write(rows.slice(0, 600));
        response.end(rows.slice(600));
      } else json(response, 200, JSON.parse(rows));
    };
    for (const args of [{}, { tag: ['chunked'] }]) {
      const result = await registry.dispatch({ name: 'shop__listOrders', arguments: args });
      expect(result.isError && result.error.message).toContain('the response is larger than 1000 bytes (maxResponseBytes)');
    }
  });

  it('path parameters cannot climb to another endpoint; redirects are followed only within the origin', async () => {
    const registry = await registryOf({ headers: { 'X-Api-Key': 'k-123' } });
    handler = (_request, response) => json(response, 200, { item: 'x' });
    // Nor can an empty one: `/orders/` is routed as `/orders` by common servers, another endpoint.
    requests.length = 0;
    for (const id of ['..', '.', '']) {
      const result = await registry.dispatch({ name: 'shop__getOrder', arguments: { id } });
      expect(result.isError && result.error.info?.code).toBe('INVALID_ARGS');
    }
    const empty = await registry.dispatch({ name: 'shop__getOrder', arguments: { id: '' } });
    expect(empty.isError && empty.error.message).toContain('make the segment "{id}" of /orders/{id} empty, which would reach another endpoint');
    expect(requests).toEqual([]);
    // An id with a slash stays one segment.
    requests.length = 0;
    await registry.dispatch({ name: 'shop__getOrder', arguments: { id: '../admin' } });
    expect(requests.map((request) => request.url)).toEqual(['/api/orders/..%2Fadmin']);

    const seenElsewhere: (string | string[] | undefined)[] = [];
    const elsewhere = createServer((request, response) => {
      seenElsewhere.push(request.headers['x-api-key']);
      json(response, 200, { item: 'stolen' });
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    try {
      const away = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/x`;
      handler = (request, response) =>
        request.url === '/api/orders/away' ? response.writeHead(302, { location: away }).end() :
        request.url === '/api/orders/moved' ? response.writeHead(301, { location: '/api/orders/here' }).end() :
        json(response, 200, { item: request.url });
      const redirected = await registry.dispatch({ name: 'shop__getOrder', arguments: { id: 'away' } });
      expect(redirected.isError && redirected.error.message).toContain('GET /orders/away redirected to another origin');
      expect(seenElsewhere).toEqual([]);
      const moved = await registry.dispatch({ name: 'shop__getOrder', arguments: { id: 'moved' } });
      expect(moved.isError ? moved.error : moved.value).toEqual({ item: '/api/orders/here' });
    } finally {
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  });

  it('a start names what is wrong: an unset ${env:…}, an unreadable spec, a spec without a server URL', async () => {
    await expect(openApiTools({ name: 'shop', spec: swagger2, headers: { Authorization: 'Bearer ${env:PTC_TEST_UNSET_TOKEN}' }, env: {} })).rejects.toThrow(
      'header "Authorization" refers to ${env:PTC_TEST_UNSET_TOKEN}, which is not set',
    );
    await expect(openApiTools({ name: 'shop', spec: '/nonexistent/spec.yaml' })).rejects.toThrow(/^the spec could not be read: /);
    const { host: _host, ...hostless } = swagger2;
    await expect(openApiTools({ name: 'shop', spec: hostless })).rejects.toThrow('the spec names no server URL: set baseUrl');
    await expect(openApiTools({ name: 'a__b', spec: swagger2 })).rejects.toThrow(/must be letters, digits/);
  });

  it('asks for compressed bodies and reads them decompressed, a failure\'s excerpt too', async () => {
    const registry = await registryOf();
    const encodings: (string | undefined)[] = [];
    handler = (request, response) => {
      encodings.push(request.headers['accept-encoding']);
      const failed = request.url === '/api/orders/gone';
      response.writeHead(failed ? 410 : 200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync(JSON.stringify(failed ? { error: 'order gone' } : { item: 'tea' })));
    };
    const found = await registry.dispatch({ name: 'shop__getOrder', arguments: { id: 'here' } });
    expect(found.isError ? found.error : found.value).toEqual({ item: 'tea' });
    const gone = await registry.dispatch({ name: 'shop__getOrder', arguments: { id: 'gone' } });
    expect(gone.isError && gone.error.message).toBe('GET /orders/gone answered 410 Gone: {"error":"order gone"}');
    expect(encodings.every((encoding) => encoding?.includes('gzip'))).toBe(true);
  });

  it("a HEAD is not judged by the Content-Length of the body a GET would get", async () => {
    const spec = { openapi: '3.0.3', info: { title: 'Files', version: '1' }, paths: { '/files/{name}': { head: { operationId: 'statFile', parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'ok' } } } } } };
    const registry = createToolRegistry();
    for (const definition of await openApiTools({ name: 'files', spec, baseUrl, maxResponseBytes: 1_000 })) registry.register(definition);
    handler = (_request, response) => response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '5000' }).end();
    const result = await registry.dispatch({ name: 'files__statFile', arguments: { name: 'big.bin' } });
    expect(result.isError ? result.error : result.value).toBeNull();
  });

  it("leaves the host's own fetch on its dispatcher, and holds no process open", async () => {
    // In a process of its own: undici must not be loaded before the probe looks.
    const probe = fileURLToPath(new URL('./host-fetch.probe.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [probe], { timeout: 20_000 });
    expect(JSON.parse(stdout)).toEqual({ before: { ok: true }, called: { ok: true }, after: { ok: true }, sameDispatcher: true });
  });

  it('takes the proxy Node\'s fetch takes from HTTP_PROXY under NODE_USE_ENV_PROXY', async () => {
    // A proxy that answers itself, asked for a URL or through a tunnel (Node's fetch asks for one even to an http host).
    const seen: string[] = [];
    const proxy = createServer((request, response) => {
      seen.push(new URL(request.url!, 'http://tunnelled.invalid').href);
      json(response, 200, { proxied: true });
    });
    proxy.on('connect', (_request: IncomingMessage, socket: Socket) => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      proxy.emit('connection', socket);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const probe = fileURLToPath(new URL('./host-fetch.probe.ts', import.meta.url));
      const { http_proxy: _lower, no_proxy: _none, NO_PROXY: _NONE, ...inherited } = process.env;
      // A host only the proxy answers: Node's fetch does not proxy loopback addresses.
      const env = { ...inherited, PROBE_BASE_URL: 'http://api.invalid', NODE_USE_ENV_PROXY: '1', HTTP_PROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` };
      const { stdout } = await promisify(execFile)(process.execPath, [probe], { timeout: 20_000, env });
      expect(JSON.parse(stdout)).toMatchObject({ before: { proxied: true }, called: { proxied: true }, after: { proxied: true } });
      expect(seen.map((url) => new URL(url).pathname)).toEqual(['/before', '/ping', '/after']);
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});
