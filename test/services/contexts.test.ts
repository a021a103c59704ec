/**
 * The context channel through the real service: a tool's `exec.agent.inject`
 * (from a program and called directly) becomes a durable `agent/context`
 * event, a post-execute hook's contexts ride on the result, and every face
 * (JSON body, SSE, MCP, tenants) returns them for the next model request.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { loadConfig } from '../../services/config.ts';
import { json, post, readSse, startServer, tempDir, type Running } from './helpers.ts';

const ACME = 'acme-token-0123456789';
const GLOBEX = 'globex-token-0123456789';
const as = (token: string) => ({ authorization: `Bearer ${token}` });
/** A small per-event cap, so a capped context needs no large request. */
const CAP = 4096;
const text = (t: string) => [{ type: 'text', text: t }];

let running: Running;
let late: () => void = () => undefined;

beforeAll(async () => {
  const defaults = loadConfig({ cwd: await tempDir(), env: {} });
  running = await startServer({
    mode: 'both',
    limits: { ...defaults.limits, maxEventContentBytes: CAP },
    tenants: [
      { name: 'acme', token: ACME },
      { name: 'globex', token: GLOBEX },
    ],
  });
  const { registry } = running.server.core;
  registry.register(
    defineTool({
      name: 'note',
      description: 'Remembers a note for the next model request.',
      parameters: { text: { type: 'string', required: true } },
      output: { schema: { type: 'integer' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
      async execute(args, exec) {
        exec.agent!.inject({ content: args.text, source: { kind: 'plugin', plugin: 'notes' } });
        late = () => exec.agent!.inject({ content: 'after the run', source: { kind: 'plugin', plugin: 'notes' } });
        return args.text.length;
      },
    }),
  );
  registry.hook('tools/post-execute', (exec) =>
    exec.parent === undefined && exec.name === 'note' ? { kind: 'accept', additionalContexts: [{ content: 'direct call seen', source: 'audit' }] } : undefined,
  );
});
afterAll(() => running.server.close());

const events = async (session: string, token = ACME) => (await json(fetch(`${running.url}/v1/sessions/${session}/events`, { headers: as(token) }))).events;

describe('contexts through the service', () => {
  it('POST /v1/run: a nested inject is an agent/context event in order, and the response returns it', async () => {
    const body = await json(post(`${running.url}/v1/run`, { code: 'await tools.note({ text: "keep this" }); return "ok";', sessionId: 'r', callId: 'run1' }, as(ACME)));
    expect(body).toMatchObject({ isError: false, callId: 'run1', value: { result: 'ok' } });
    expect(body.contexts).toEqual([{ via: 'inject', content: text('keep this'), source: 'notes', callId: 'run1:ptc:1' }]);

    const log = await events('r');
    expect(log.map((e: { type: string; seq: number }) => `${e.seq} ${e.type}`)).toEqual([
      '1 tool/ptc-dispatch-start',
      '2 agent/context',
      '3 tool/ptc-dispatch',
      '4 tool/result',
    ]);
    // Tenancy: the stored ids carry the tenant's prefix; the client sees its own.
    expect(log[1]).toMatchObject({ type: 'agent/context', sessionId: 'r', rootCallId: 'run1', callId: 'run1:ptc:1', name: 'note', content: text('keep this'), source: { kind: 'plugin', plugin: 'notes' } });
    expect(body.events.map((e: { type: string }) => e.type)).toEqual(log.map((e: { type: string }) => e.type));
    expect(await events('r', GLOBEX)).toEqual([]);

    // The run is over: a late inject does not throw into the tool and writes nothing into the finished run.
    expect(() => late()).not.toThrow();
    expect(await events('r')).toHaveLength(4);
  });

  it('POST /v1/tools/:name: a direct inject and a hook context, in that order, durable', async () => {
    const body = await json(post(`${running.url}/v1/tools/note`, { arguments: { text: 'hello' }, sessionId: 'd', callId: 'direct1' }, as(ACME)));
    expect(body).toMatchObject({ isError: false, value: 5 });
    expect(body.contexts).toEqual([
      { via: 'inject', content: text('hello'), source: 'notes', callId: 'direct1' },
      { via: 'hook', content: text('direct call seen'), source: 'audit' },
    ]);
    const log = await events('d');
    expect(log.map((e: { type: string }) => e.type)).toEqual(['agent/context', 'tool/result']);
    expect(log[1]).toMatchObject({ callId: 'direct1', additionalContexts: [{ content: text('direct call seen'), source: 'audit' }] });
  });

  it('SSE: a context event while the run goes on, and the contexts in the final result', async () => {
    const response = await post(
      `${running.url}/v1/run`,
      { code: 'await tools.note({ text: "streamed" }); return 1;', sessionId: 's', callId: 'sse1' },
      { ...as(ACME), accept: 'text/event-stream' },
    );
    const sse = await readSse(response);
    expect(sse.map((e) => e.event)).toEqual(['ptc-dispatch-start', 'context', 'ptc-dispatch', 'result']);
    expect(sse[1].data).toMatchObject({ type: 'agent/context', callId: 'sse1:ptc:1', content: text('streamed') });
    expect((sse[3].data as { contexts: unknown }).contexts).toEqual([{ via: 'inject', content: text('streamed'), source: 'notes', callId: 'sse1:ptc:1' }]);
  });

  it('caps the stored context like any event content, and the response returns the stored copy', async () => {
    const body = await json(post(`${running.url}/v1/tools/note`, { arguments: { text: 'x'.repeat(CAP + 10) }, sessionId: 'big' }, as(ACME)));
    expect(body.value).toBe(CAP + 10);
    const injected = body.contexts[0];
    expect(injected.via).toBe('inject');
    expect(injected.content.at(-1).text).toMatch(/content truncated/);
    const [event] = await events('big');
    expect(event.content).toEqual(injected.content);
  });
});

describe('contexts through MCP', () => {
  it('returns a run\'s contexts as text after the result and under _meta', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', running.url), { requestInit: { headers: as(GLOBEX) } }));
    try {
      const result = (await client.callTool({ name: 'run_code', arguments: { code: 'await tools.note({ text: "from mcp" }); return 2;', description: 'note' } })) as CallToolResult;
      expect(result.structuredContent).toMatchObject({ logs: [], result: 2 });
      expect(result.content.at(-1)).toEqual({ type: 'text', text: '[context injected by notes]\nfrom mcp' });
      const contexts = result._meta?.['ptc-executor/contexts'] as { via: string; callId: string; content: unknown }[];
      expect(contexts).toHaveLength(1);
      expect(contexts[0]).toMatchObject({ via: 'inject', source: 'notes', content: text('from mcp') });
      // Named as the nested call of the MCP run that injected.
      expect(contexts[0].callId).toMatch(/^[0-9a-f-]{36}:ptc:1$/);
    } finally {
      await client.close();
    }
  });
});
