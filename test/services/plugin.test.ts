import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createCodeMode, createMemoryEventSink, createToolRegistry, defineTool } from '../../entries/index.ts';
import { createLogRouter, createSessionStore, ptcPlugin } from '../../entries/service.ts';
import { json, post, readSse } from './helpers.ts';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function host() {
  const memory = createMemoryEventSink();
  const sessions = createSessionStore(memory);
  const registry = createToolRegistry({ eventSink: sessions });
  registry.register(
    defineTool({
      name: 'add',
      description: 'Adds two numbers.',
      parameters: { a: { type: 'number', required: true }, b: { type: 'number', required: true } },
      output: { schema: { type: 'number' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
      execute: async ({ a, b }) => a + b,
      isConcurrencySafe: () => true,
    }),
  );
  const logs = createLogRouter();
  const codeMode = createCodeMode({ registry, onLog: logs.onLog });
  const app = Fastify();
  // The host's own route keeps the host's validation (type coercion on).
  app.get('/host/square', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } } } } }, async (request) => {
    const { n } = request.query as { n: number };
    return { square: n * n };
  });
  await app.register(ptcPlugin, { registry, codeMode, sessions, logs, auth: { token: 'host-token-0123456789' }, prefix: '/ptc' });
  closers.push(() => codeMode.close());
  closers.push(() => app.close());
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: address };
}

describe('ptcPlugin on a host instance', () => {
  it('serves under a prefix with its own auth, and leaves the host routes alone', async () => {
    const { url } = await host();
    const auth = { authorization: 'Bearer host-token-0123456789' };
    expect(await json(fetch(`${url}/host/square?n=7`))).toEqual({ square: 49 });
    expect((await fetch(`${url}/ptc/v1/tools`)).status).toBe(401);
    expect((await fetch(`${url}/ptc/healthz`)).status).toBe(200);
    const body = await json(post(`${url}/ptc/v1/run?events=full`, { code: `return await tools.add({ a: 2, b: 3 })`, sessionId: 'h' }, auth));
    expect(body).toMatchObject({ isError: false, value: { result: 5 }, stats: { calls: 1 } });
    expect(await json(fetch(`${url}/ptc/v1/sessions/h/events`, { headers: auth }))).toEqual({ events: body.events });
    const strict = await post(`${url}/ptc/v1/run`, { code: 'return 1', timeoutMs: '5' }, auth);
    expect(await json(strict)).toMatchObject({ statusCode: 400, code: 'INVALID_REQUEST', message: expect.stringContaining('body.timeoutMs') });
  });

  it('streams live logs through the log router', async () => {
    const { url } = await host();
    const response = await post(
      `${url}/ptc/v1/run`,
      { code: `console.log('a');\nconst n = await tools.add({ a: 1, b: 1 });\nconsole.log('b', n);\nreturn n;` },
      { authorization: 'Bearer host-token-0123456789', accept: 'text/event-stream' },
    );
    const events = await readSse(response);
    expect(events.map((event) => event.event)).toEqual(['log', 'ptc-dispatch-start', 'ptc-dispatch', 'log', 'result']);
    expect(events[3].data).toEqual({ line: 'b 2' });
  });
});
