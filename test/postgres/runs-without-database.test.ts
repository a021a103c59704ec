/**
 * GET /v1/runs/:callId and live follow without a database: the replica's
 * own memory and log, with tenant ids translated both ways.
 */
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createCodeMode, createMemoryEventSink, createToolRegistry, defineTool } from '../../entries/index.ts';
import { createLogRouter, createSessionStore, ptcPlugin } from '../../entries/service.ts';
import { openSse } from './sse-reader.ts';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function host(auth?: { tokens: { name: string; token: string }[] }) {
  const sessions = createSessionStore(createMemoryEventSink());
  const registry = createToolRegistry({ eventSink: sessions });
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  registry.register(
    defineTool({
      name: 'wait',
      description: 'Waits until the test releases it.',
      parameters: {},
      output: { schema: { type: 'number' }, render: () => [{ type: 'text', text: 'done' }] },
      execute: async () => {
        await gate;
        return 1;
      },
    }),
  );
  const logs = createLogRouter();
  const codeMode = createCodeMode({ registry, onLog: logs.onLog, runtime: 'in-process' });
  const app = Fastify();
  await app.register(ptcPlugin, { registry, codeMode, sessions, logs, ...(auth === undefined ? {} : { auth }) });
  closers.push(() => codeMode.close());
  closers.push(() => app.close());
  return { url: await app.listen({ port: 0, host: '127.0.0.1' }), release };
}

const postRun = (url: string, body: object, headers: Record<string, string> = {}) =>
  fetch(`${url}/v1/run`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('runs and live follow without a database', () => {
  it('answers running, then ok, for a run of this replica; 404 for one it never saw', async () => {
    const { url, release } = await host();
    const follower = await openSse(`${url}/v1/sessions/s1/events`);
    const done = postRun(url, { sessionId: 's1', callId: 'c1', code: 'await tools.wait({}); await tools.wait({}); return 1' });
    // The first nested call's events are flushed only at the end of the outer call, so wait on the run record.
    let running;
    do running = (await (await fetch(`${url}/v1/runs/c1`)).json()) as { state: string };
    while (running.state !== 'running');
    expect(running).toMatchObject({ callId: 'c1', sessionId: 's1', state: 'running' });
    release();
    expect((await done).status).toBe(200);
    const final = await follower.until((e) => e.event === 'tool/result');
    expect(final.data).toMatchObject({ callId: 'c1', seq: 5 });
    expect(follower.events.map((e) => e.data.seq)).toEqual([1, 2, 3, 4, 5]);
    follower.close();
    const ended = (await (await fetch(`${url}/v1/runs/c1`)).json()) as { state: string; endedAt?: string };
    expect(ended.state).toBe('ok');
    expect(ended.endedAt).toBeDefined();
    const missing = await fetch(`${url}/v1/runs/nope`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('RUN_NOT_FOUND');
  });

  it('keeps tenants apart: ids come back without the prefix, another tenant gets 404', async () => {
    const tokens = [
      { name: 'acme', token: 'acme-token-0123456789' },
      { name: 'umbrella', token: 'umbrella-token-0123456789' },
    ];
    const { url, release } = await host({ tokens });
    release();
    const acme = { authorization: `Bearer ${tokens[0].token}` };
    expect((await postRun(url, { sessionId: 's', callId: 'mine', code: 'return 1' }, acme)).status).toBe(200);
    expect(await (await fetch(`${url}/v1/runs/mine`, { headers: acme })).json()).toMatchObject({ callId: 'mine', sessionId: 's', state: 'ok' });
    expect((await fetch(`${url}/v1/runs/mine`, { headers: { authorization: `Bearer ${tokens[1].token}` } })).status).toBe(404);
  });
});
