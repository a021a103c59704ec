import { readdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../services/config.ts';
import { createServer } from '../../services/server.ts';
import { post, readSse, startServer, tempDir, type Running, json } from './helpers.ts';

const TOKEN = 'test-token-0123456789abcdef';
const servers: Running[] = [];
async function start(...args: Parameters<typeof startServer>): Promise<Running> {
  const running = await startServer(...args);
  servers.push(running);
  return running;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((running) => running.server.close()));
});

describe('auth', () => {
  it('requires the bearer token everywhere but the probes', async () => {
    const { url } = await start({ token: TOKEN });
    const missing = await fetch(`${url}/v1/tools`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(await json(missing)).toEqual({ statusCode: 401, code: 'UNAUTHORIZED', error: 'Unauthorized', message: expect.stringContaining('Bearer') });
    expect((await fetch(`${url}/v1/tools`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    expect((await post(`${url}/v1/run`, { code: 'return 1' })).status).toBe(401);
    expect((await fetch(`${url}/docs/json`)).status).toBe(401);
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    const ok = await fetch(`${url}/v1/tools`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    // A path parameter past its limit is refused after auth, as a 404 or a 413 is: without the token, 401.
    const longParam = `${url}/v1/sessions/${'b'.repeat(300)}/events`;
    expect(await json(fetch(longParam))).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' });
    expect(await json(fetch(longParam, { headers: { authorization: `Bearer ${TOKEN}` } }))).toMatchObject({ statusCode: 414, code: 'PARAM_TOO_LONG' });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    // Without a token too; it says 503 until the sandbox has warmed up (slow on a loaded machine).
    await expect.poll(async () => (await fetch(`${url}/readyz`)).status, { timeout: 20_000 }).toBe(200);
  });

  it('refuses to start on a non-loopback host without a token', async () => {
    const cwd = await tempDir();
    const { loadConfig } = await import('../../services/config.ts');
    const config = { ...loadConfig({ cwd, env: {} }), host: '0.0.0.0', runtime: 'in-process' as const, logLevel: 'silent' as const };
    await expect(createServer(config)).rejects.toThrow(ConfigError);
    await expect(createServer(config)).rejects.toThrow(/without a token/);
  });
});

describe('bad requests', () => {
  it('413 on a body over the limit', async () => {
    const { url } = await start({ bodyLimit: 1024 });
    const response = await post(`${url}/v1/run`, { code: `return '${'x'.repeat(2000)}'` });
    expect(response.status).toBe(413);
    expect(await json(response)).toMatchObject({ statusCode: 413, code: 'BODY_TOO_LARGE', error: 'Payload Too Large' });
  });

  it('400 naming the field for a malformed body', async () => {
    const { url } = await start();
    const wrongType = await post(`${url}/v1/run`, { code: 5 });
    expect(wrongType.status).toBe(400);
    // The wording of validation messages is pinned in test/services/http-errors.test.ts; here, the code and the field.
    expect(await json(wrongType)).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('body.code') });
    const missing = await json(post(`${url}/v1/run`, {}));
    expect(missing).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('body.code') });
    const unknown = await json(post(`${url}/v1/run`, { code: 'return 1', tiemout: 5 }));
    expect(unknown.message).toContain('unknown field "tiemout"');
    const session = await json(post(`${url}/v1/run`, { code: 'return 1', sessionId: '../../etc' }));
    expect(session.message).toContain('body.sessionId');
    const broken = await fetch(`${url}/v1/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"code":' });
    expect(broken.status).toBe(400);
    expect((await json(broken)).code).toBe('INVALID_JSON');
    const notFound = await fetch(`${url}/v1/nope`);
    expect(await json(notFound)).toMatchObject({ statusCode: 404, code: 'NOT_FOUND', message: 'no route GET /v1/nope: see /docs/json' });
    // A long unknown path is named by its first 200 characters, not repeated whole.
    const long = await json(fetch(`${url}/v1/${'x'.repeat(10_000)}`));
    expect(long).toMatchObject({ statusCode: 404, message: `no route GET /v1/${'x'.repeat(196)}…: see /docs/json` });
  });
});

describe('limits', () => {
  it('429 with Retry-After at the per-client concurrency cap', async () => {
    const { url } = await start({ maxConcurrentRunsPerClient: 1 });
    const first = await post(
      `${url}/v1/run`,
      { code: `console.log('started');\nawait new Promise((resolve) => setTimeout(resolve, 20000));`, callId: 'holder' },
      { accept: 'text/event-stream' },
    );
    let second: Response | undefined;
    await readSse(first, (event) => {
      if (event.event === 'log') {
        void post(`${url}/v1/run`, { code: 'return 1' }).then(async (response) => {
          second = response;
          await fetch(`${url}/v1/runs/holder`, { method: 'DELETE' });
        });
      }
    });
    expect(second!.status).toBe(429);
    expect(second!.headers.get('retry-after')).toBe('1');
    expect(await json(second!)).toMatchObject({ code: 'TOO_MANY_RUNS' });
    expect((await post(`${url}/v1/run`, { code: 'return 1' })).status).toBe(200);
  });

  it('429 with Retry-After past the rate limit', async () => {
    const { url } = await start({ rateLimit: { max: 2, timeWindow: 60_000 } });
    expect((await fetch(`${url}/v1/tools`)).status).toBe(200);
    expect((await fetch(`${url}/v1/tools`)).status).toBe(200);
    const limited = await fetch(`${url}/v1/tools`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await json(limited)).toMatchObject({ code: 'RATE_LIMITED' });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});

describe('/readyz and the folders the server writes', () => {
  it('is 503 while the workspace or the data folder cannot be written, naming which but not its path, and ready again after', async () => {
    const dir = await tempDir();
    const workspace = path.join(dir, 'workspace');
    const dataDir = path.join(dir, 'data');
    const { url } = await start({ workspace, dataDir });
    await expect.poll(async () => (await fetch(`${url}/readyz`)).status, { timeout: 20_000 }).toBe(200);
    for (const [name, folder] of [['workspace', workspace], ['data', dataDir]]) {
      // Gone stands in for not writable: the check is the same (this test may run as root, whom modes do not stop).
      await rename(folder, `${folder}.away`);
      const refused = await fetch(`${url}/readyz`);
      expect(refused.status).toBe(503);
      const body = (await refused.json()) as { code: string; message: string };
      expect(body.code).toBe('NOT_READY');
      expect(body.message).toContain(`the ${name} folder is not writable by this process (ENOENT)`);
      expect(body.message).not.toContain(dir);
      await rename(`${folder}.away`, folder);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
    }
  });
});

describe('durable sessions', () => {
  it('events are readable after the server restarts on the same data dir', async () => {
    const dataDir = await tempDir();
    const first = await startServer({ dataDir });
    const run = await json(post(`${first.url}/v1/run?events=full`, { code: `await tools.glob({ pattern: '*' });\nreturn 1`, sessionId: 's1', callId: 'r1' }));
    await first.server.close();
    expect(await readdir(path.join(dataDir, 'sessions'))).toContain('s1.jsonl');

    const second = await start({ dataDir });
    const { events } = await json(fetch(`${second.url}/v1/sessions/s1/events`));
    expect(events).toEqual(run.events);
    const after = await json(fetch(`${second.url}/v1/sessions/s1/events?after=2`));
    expect(after.events.map((event: { seq: number }) => event.seq)).toEqual([3]);
    expect(await json(fetch(`${second.url}/v1/sessions/never-used/events`))).toEqual({ events: [] });
    const bad = await fetch(`${second.url}/v1/sessions/..%2F..%2Fetc/events`);
    expect(bad.status).toBe(400);
  });
});

describe('read-only routes', () => {
  it('typings with an ETag and 304', async () => {
    const { url } = await start();
    const response = await fetch(`${url}/v1/typings`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await response.text()).toContain('declare const tools');
    const etag = response.headers.get('etag')!;
    const cached = await fetch(`${url}/v1/typings`, { headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
    expect(await cached.text()).toBe('');
  });

  it('tools, prompt, OpenAPI and metrics', async () => {
    const { url } = await start();
    const { tools } = await json(fetch(`${url}/v1/tools`));
    expect(tools.map((tool: { name: string }) => tool.name)).toEqual(expect.arrayContaining(['read', 'run_code']));
    const prompt = await fetch(`${url}/v1/prompt`);
    expect(prompt.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(await prompt.text()).toContain('declare const tools');
    const openapi = await json(fetch(`${url}/docs/json`));
    expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(['/v1/run', '/v1/tools/{name}', '/v1/runs/{callId}']));
    await post(`${url}/v1/run`, { code: `await tools.glob({ pattern: '*' }); return 1` });
    await post(`${url}/v1/run`, { code: 'syntax error here (' });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain('ptc_runs_total{kind="code",outcome="ok"} 1');
    expect(metrics).toContain('ptc_runs_total{kind="code",outcome="syntax"} 1');
    expect(metrics).toContain('ptc_nested_calls_total{tool="glob",outcome="ok"} 1');
    expect(metrics).toMatch(/ptc_run_duration_seconds_count\{kind="code"\} 2/);
    expect(metrics).toContain('ptc_pool_busy');
  });

  it('POST /v1/tools/:name: only run_code in code mode, any tool in both', async () => {
    const code = await start();
    const refused = await json(post(`${code.url}/v1/tools/glob`, { arguments: { pattern: '*' } }));
    expect(refused).toMatchObject({ isError: true, error: { info: { code: 'UNKNOWN_TOOL' } } });
    const both = await start({ mode: 'both' });
    const wrote = await json(post(`${both.url}/v1/tools/write`, { arguments: { file_path: 'x.txt', content: 'hello\n' }, callId: 'w1' }));
    expect(wrote).toMatchObject({ isError: false, callId: 'w1', value: { operation: 'create' } });
    expect(wrote.meta).toBeDefined();
    expect(wrote.events.map((event: { type: string }) => event.type)).toEqual(['tool/result']);
  });

  it('typecheck: enforce fails a misspelt tool before anything runs', async () => {
    const { url } = await start({ typecheck: 'enforce' });
    const body = await json(post(`${url}/v1/run`, { code: `return await tools.raed({ file_path: 'x' });` }));
    expect(body.isError).toBe(true);
    expect(body.error.message).toContain('code run failed (typecheck)');
    expect(body.stats.calls).toBe(0);
  });
});
