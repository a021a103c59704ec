/**
 * Tenancy beyond /v1/run: MCP sessions belong to the tenant that opened them
 * (another tenant's token finds no such session, the cap counts per tenant
 * and never evicts another tenant's session or one with a call in flight,
 * the logs land in the owner's namespace), and the per-client run cap counts
 * per tenant although every tenant here shares 127.0.0.1.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { json, post, readSse, startServer, type Running } from './helpers.ts';

const ACME = 'acme-token-0123456789';
const GLOBEX = 'globex-token-0123456789';
const as = (token: string) => ({ authorization: `Bearer ${token}` });

/** A tool that holds its caller until the test opens it; `entered` counts the calls that reached it. */
function createGate() {
  let open!: () => void;
  let opened = new Promise<void>((resolve) => (open = resolve));
  const arrivals: (() => void)[] = [];
  let entered = 0;
  return {
    tool: defineTool({
      name: 'gate',
      description: 'Waits until the test opens it.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
      async execute() {
        entered++;
        for (const arrived of arrivals.splice(0)) arrived();
        await opened;
        return 'through';
      },
    }),
    get entered() {
      return entered;
    },
    /** Resolves once `count` calls in all have reached the gate. */
    async reached(count: number): Promise<void> {
      while (entered < count) await new Promise<void>((resolve) => arrivals.push(resolve));
    },
    open() {
      open();
      opened = new Promise<void>((resolve) => (open = resolve));
    },
  };
}

let running: Running;
const gate = createGate();

beforeAll(async () => {
  running = await startServer({
    maxMcpSessionsPerTenant: 2,
    maxConcurrentRunsPerClient: 2,
    tenants: [
      { name: 'acme', token: ACME },
      { name: 'globex', token: GLOBEX },
    ],
  });
  running.server.core.registry.register(gate.tool);
});
afterAll(() => running.server.close());

async function connect(token: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', running.url), { requestInit: { headers: as(token) } });
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const runCode = async (client: Client, code: string) =>
  (await client.callTool({ name: 'run_code', arguments: { code, description: 'test' } })) as CallToolResult;

/** A raw JSON-RPC request on an MCP session, with a token of choice. */
function rawMcp(sessionId: string, token: string, body: object): Promise<Response> {
  return fetch(new URL('/mcp', running.url), {
    method: 'POST',
    headers: {
      ...as(token),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify(body),
  });
}

describe('/mcp with two tenants', () => {
  it("answers 404 to another tenant's token on a session, and logs runs where only the owner reads them", async () => {
    const acme = await connect(ACME);
    try {
      const result = await runCode(acme.client, 'await tools.glob({ pattern: "*" }); return "acme";');
      expect(result.structuredContent).toMatchObject({ logs: [], result: 'acme' });
      const id = acme.transport.sessionId!;

      const foreign = await rawMcp(id, GLOBEX, { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} });
      expect(foreign.status).toBe(404);
      const own = await rawMcp(id, ACME, { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} });
      expect(own.status).toBe(200);

      const read = async (token: string) => (await json(fetch(`${running.url}/v1/sessions/mcp-${id}/events`, { headers: as(token) }))).events;
      const events = await read(ACME);
      expect(events.map((e: { type: string }) => e.type)).toEqual(['tool/ptc-dispatch-start', 'tool/ptc-dispatch', 'tool/result']);
      // The owner sees its own ids, never the prefix.
      expect(events[2].sessionId).toBe(`mcp-${id}`);
      expect(JSON.stringify(events)).not.toContain('acme_');
      expect(await read(GLOBEX)).toEqual([]);
      expect(await readdir(path.join(running.config.dataDir, 'sessions'))).toContain(`acme_mcp-${id}.jsonl`);
    } finally {
      await acme.client.close();
    }
  });

  it("evicts only the tenant's own idle sessions at its cap, never another tenant's, never one with a call in flight", async () => {
    const before = gate.entered;
    const globex = await connect(GLOBEX);
    const globexRun = runCode(globex.client, 'return await tools.gate({});');
    const busyAcme = await connect(ACME);
    const acmeRun = runCode(busyAcme.client, 'return await tools.gate({});');
    await gate.reached(before + 2);
    const sessions = [globex, busyAcme];
    try {
      // Acme at its cap of 2: each new session evicts its idle one, not its busy one and not globex's.
      const idle = await connect(ACME);
      sessions.push(idle);
      const third = await connect(ACME);
      sessions.push(third);
      const evicted = await rawMcp(idle.transport.sessionId!, ACME, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
      expect(evicted.status).toBe(404);

      // Both acme sessions busy: a further one is refused, and nothing is evicted.
      const thirdRun = runCode(third.client, 'return await tools.gate({});');
      await gate.reached(before + 3);
      await expect(connect(ACME)).rejects.toThrow(/503/);
      const refused = await post(
        `${running.url}/mcp`,
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
        { ...as(ACME), accept: 'application/json, text/event-stream' },
      );
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toMatchObject({ code: 'TOO_MANY_MCP_SESSIONS' });

      // Globex, under its own cap, still opens sessions.
      const another = await connect(GLOBEX);
      sessions.push(another);

      gate.open();
      for (const run of [globexRun, acmeRun, thirdRun]) expect((await run).structuredContent).toMatchObject({ logs: [], result: 'through' });
    } finally {
      gate.open();
      await Promise.allSettled(sessions.map((session) => session.client.close()));
    }
  });
});

describe('per-client caps key on the tenant', () => {
  it("counts runs in flight per tenant, so one tenant at its cap does not refuse another behind the same address", async () => {
    const before = gate.entered;
    const held = [post(`${running.url}/v1/run`, { code: 'return await tools.gate({})' }, as(ACME)), post(`${running.url}/v1/run`, { code: 'return await tools.gate({})' }, as(ACME))];
    try {
      await gate.reached(before + 2);
      const over = await post(`${running.url}/v1/run`, { code: 'return 1' }, as(ACME));
      expect(over.status).toBe(429);
      expect(await over.json()).toMatchObject({ code: 'TOO_MANY_RUNS' });
      expect(await json(post(`${running.url}/v1/run`, { code: 'return 2' }, as(GLOBEX)))).toMatchObject({ isError: false, value: { result: 2 } });
    } finally {
      gate.open();
    }
    for (const response of await Promise.all(held)) expect(response.status).toBe(200);
  });
});

describe('shared search workers with two tenants', () => {
  let server: Running;
  beforeAll(async () => {
    server = await startServer({
      toolLimits: { searchWorkers: 2, searchTimeoutMs: 600_000 },
      tenants: [
        { name: 'acme', token: ACME },
        { name: 'globex', token: GLOBEX },
      ],
    });
  });
  afterAll(() => server.server.close());

  it("finishes another tenant's glob while one tenant's burst of backtracking greps holds the workers", async () => {
    const setup = await json(
      post(`${server.url}/v1/run`, { code: `await tools.write({ file_path: 'stuck.txt', content: '${'a'.repeat(40)}!\\n' }); await tools.write({ file_path: 'b.txt', content: '' });` }, as(ACME)),
    );
    expect(setup.isError).toBe(false);
    // Ten greps V8 would backtrack on for ever (RE2 refuses the backreference), all at once.
    const burst = await post(
      `${server.url}/v1/run`,
      { code: "return await Promise.allSettled(Array.from({ length: 10 }, () => tools.grep({ pattern: '^(a+)+\\\\1$', path: 'stuck.txt' })));", callId: 'burst', timeoutMs: 600_000 },
      { ...as(ACME), accept: 'text/event-stream' },
    );
    let started = 0;
    let ended = 0;
    let burstStarted!: () => void;
    const whenStarted = new Promise<void>((resolve) => (burstStarted = resolve));
    const events = readSse(burst, (event) => {
      if (event.event === 'ptc-dispatch-start' && ++started === 10) burstStarted();
      if (event.event === 'ptc-dispatch') ended++;
    });
    await whenStarted;
    const glob = await json(post(`${server.url}/v1/run`, { code: "return await tools.glob({ pattern: '*.txt' });" }, as(GLOBEX)));
    expect(glob.value.result).toEqual({ paths: ['b.txt', 'stuck.txt'] });
    // The glob did not wait for any of the burst's greps to end.
    expect(ended).toBe(0);
    expect((await fetch(`${server.url}/v1/runs/burst`, { method: 'DELETE', headers: as(ACME) })).status).toBe(202);
    await events;
  });
});
