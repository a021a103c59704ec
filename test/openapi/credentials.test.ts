// Configured credentials reach the API and nothing a program, a client or the session log can read.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startServer, tempDir, type Running } from '../services/helpers.ts';

const SECRET = 'sk-live-0123456789abcdef-SECRET';
const ENV_NAME = 'PTC_TEST_OPENAPI_TOKEN';
let api: Server;
let running: Running;
const seen: (string | undefined)[] = [];

const spec = {
  openapi: '3.1.0',
  info: { title: 'Vault', version: '1' },
  paths: {
    '/whoami': {
      get: {
        operationId: 'whoami',
        summary: 'Who the token belongs to',
        // The spec declares the credential header itself: the configured one must win and the parameter must vanish.
        parameters: [{ name: 'Authorization', in: 'header', schema: { type: 'string' } }],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { user: { type: 'string' } } } } } } },
      },
    },
    '/denied': { get: { operationId: 'denied', responses: { '200': { description: 'never' } } } },
    '/big': { get: { operationId: 'big', responses: { '200': { description: 'a lot', content: { 'application/json': { schema: { type: 'array', items: { type: 'string' } } } } } } } },
  },
};

function handle(request: IncomingMessage): { status: number; body: unknown } {
  seen.push(request.headers.authorization);
  if (request.url === '/whoami') return { status: 200, body: { user: 'ada' } };
  // An API that quotes the request back in its error, minus the credential (as real ones do).
  if (request.url === '/denied') return { status: 403, body: { error: `forbidden: ${request.method} ${request.url}` } };
  return { status: 200, body: Array.from({ length: 400 }, (_, i) => `row ${i}`) };
}

beforeAll(async () => {
  api = createServer((request, response) => {
    const { status, body } = handle(request);
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  // A port nothing listens on any more.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const dir = await tempDir('ptc-openapi-credentials-');
  await writeFile(path.join(dir, 'vault.json'), JSON.stringify(spec));
  process.env[ENV_NAME] = SECRET;
  running = await startServer({
    spill: { maxInlineBytes: 1024 },
    openapi: {
      vault: { spec: path.join(dir, 'vault.json'), baseUrl: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, headers: { Authorization: `Bearer \${env:${ENV_NAME}}` } },
      // Nothing listens there: a network failure's message is a route too.
      down: { spec: path.join(dir, 'vault.json'), baseUrl: `http://127.0.0.1:${closedPort}/x`, headers: { 'X-Api-Key': `\${env:${ENV_NAME}}` }, include: ['whoami'] },
    },
  });
});

afterAll(async () => {
  delete process.env[ENV_NAME];
  await running?.server.close();
  await new Promise((resolve) => api?.close(resolve));
});

describe('OpenAPI credentials', () => {
  it('are sent to the API, and no route shows them: results, errors, logs, events, spill, typings, schemas, prompt', async () => {
    const program = `
      const me = await tools.vault__whoami({});
      console.log('me', JSON.stringify(me));
      const errors = [];
      for (const call of [() => tools.vault__denied({}), () => tools.down__whoami({}), () => tools.vault__whoami({ Authorization: 'Bearer mine' })]) {
        try { await call(); } catch (e) { errors.push({ code: e.code, message: e.message, stack: String(e.stack) }); console.log(e.message); }
      }
      const big = await tools.vault__big({});
      return { me, errors, big };
    `;
    const response = await post(`${running.url}/v1/run`, { code: program, sessionId: 'leak' });
    const runText = await response.text();
    const run = JSON.parse(runText) as { isError: boolean; value: { logs: string[]; result: { me: unknown; errors: { code: string; message: string }[] } } };
    expect(run.isError).toBe(false);
    expect(run.value.result.me).toEqual({ user: 'ada' });
    expect(run.value.result.errors.map((error) => error.code)).toEqual(['HTTP_403', 'TOOL_FAILED', 'INVALID_ARGS']);
    expect(run.value.result.errors[0].message).toContain('GET /denied answered 403');
    expect(run.value.result.errors[1].message).toContain('ECONNREFUSED');
    expect(run.value.result.errors[2].message).toContain('unknown key "Authorization"');
    // The API saw the configured credential on every request, never the program's.
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(new Set(seen)).toEqual(new Set([`Bearer ${SECRET}`]));

    const routes: string[] = [runText];
    for (const route of ['/v1/typings', '/v1/tools', '/v1/prompt', '/v1/sessions/leak/events?limit=1000']) {
      const read = await fetch(`${running.url}${route}`);
      expect(read.status).toBe(200);
      routes.push(await read.text());
    }
    const spillDir = path.join(running.config.dataDir, 'spill');
    const spilled = await readdir(spillDir, { recursive: true, withFileTypes: true });
    const files = spilled.filter((entry) => entry.isFile());
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) routes.push(await readFile(path.join(file.parentPath, file.name), 'utf8'));

    expect(routes.join('\n')).toContain('row 399');
    for (const text of routes) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(ENV_NAME);
    }
  });
});
