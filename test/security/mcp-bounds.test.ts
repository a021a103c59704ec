/**
 * The /mcp face under the host's bounds: a client that never reads its
 * answer holds it against the outbound budget, so past `maxOutboundMiB` new
 * requests get 503 before any work, and it is dropped once it stalls for
 * `writeStallMs`; a reading client still gets a message larger than the
 * per-connection cap. A run_code whose events could not be recorded
 * (storage failing, a quota reached) is refused as a tool error naming the
 * code.
 */
import { once } from 'node:events';
import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import type { SinkState } from '../../services/session-store.ts';
import { startServer, type Running } from '../services/helpers.ts';

const MiB = 1024 * 1024;
const running: Running[] = [];
const clients: Client[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const client of clients.splice(0)) await client.close();
  for (const r of running.splice(0)) await r.server.close();
});

async function connect(r: Running): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', r.url));
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

const runCode = async (client: Client, code: string) =>
  (await client.callTool({ name: 'run_code', arguments: { code, description: 'test' } }, undefined, { timeout: 60_000 })) as CallToolResult;

const textOf = (result: CallToolResult) => result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');

/** The headers of a request on an initialized MCP session. */
const sessionHeaders = (transport: StreamableHTTPClientTransport) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-session-id': transport.sessionId!,
  'mcp-protocol-version': transport.protocolVersion ?? '2025-06-18',
});

/** Sends a JSON-RPC request on the session from a raw connection that then reads nothing. */
async function stalledCall(r: Running, transport: StreamableHTTPClientTransport, message: object): Promise<net.Socket> {
  const { hostname, port } = new URL(r.url);
  const socket = net.connect({ host: hostname, port: Number(port) });
  sockets.push(socket);
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.pause();
  const body = JSON.stringify(message);
  const headers = Object.entries({ ...sessionHeaders(transport), host: `${hostname}:${port}`, 'content-length': String(Buffer.byteLength(body)) })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(`POST /mcp HTTP/1.1\r\n${headers}\r\n${body}`);
  return socket;
}

/** The status of a tools/list on the session: a request the face refuses while the outbound budget is full. */
async function listStatus(r: Running, transport: StreamableHTTPClientTransport): Promise<number> {
  const response = await fetch(new URL('/mcp', r.url), {
    method: 'POST',
    headers: sessionHeaders(transport),
    body: JSON.stringify({ jsonrpc: '2.0', id: 'probe', method: 'tools/list', params: {} }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('/mcp under the outbound bounds', () => {
  it('holds an unread answer against maxOutboundMiB, refuses new requests with 503 meanwhile, and drops the stalled client', { timeout: 120_000 }, async () => {
    const r = await startServer({ writeStallMs: 5_000, maxOutboundMiB: 4, maxConnectionOutboundMiB: 2 });
    running.push(r);
    const { client, transport } = await connect(r);
    // An answer of about 15 MiB: far more than the kernel's socket buffers take, so most of it waits in the server.
    const big = "return 'x'.repeat(15 * 1024 * 1024)";
    await stalledCall(r, transport, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_code', arguments: { code: big } } });

    // While it sits unread the budget is full: requests are refused before the transport, runs first of all.
    await expect.poll(() => listStatus(r, transport), { timeout: 60_000, interval: 50 }).toBe(503);
    await expect(runCode(client, 'return 1')).rejects.toThrow(/UNDER_PRESSURE/);

    // The stalled client is dropped, which frees the budget.
    await expect.poll(() => listStatus(r, transport), { timeout: 60_000, interval: 100 }).toBe(200);
    // A client that reads gets the same answer whole, although one message is larger than a connection may hold waiting.
    const result = await runCode(client, big);
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { result: string }).result.length).toBe(15 * MiB);
  });

  it('cancels the calls of a request whose client left before its answer', { timeout: 60_000 }, async () => {
    const r = await startServer();
    running.push(r);
    let entered!: () => void;
    const reached = new Promise<void>((resolve) => (entered = resolve));
    let aborted!: (reason: unknown) => void;
    const cancelled = new Promise<unknown>((resolve) => (aborted = resolve));
    r.server.core.registry.register(
      defineTool({
        name: 'hold',
        description: 'Holds its caller until its call is aborted.',
        parameters: {},
        output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
        async execute(_args, exec) {
          entered();
          await new Promise<void>((resolve) => exec.signal.addEventListener('abort', () => resolve(), { once: true }));
          aborted(exec.signal.reason);
          return 'released';
        },
      }),
    );
    const { transport } = await connect(r);
    const socket = await stalledCall(r, transport, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'run_code', arguments: { code: 'return await tools.hold({})', timeoutMs: 600_000 } } });
    await reached;
    socket.destroy();
    // Nothing could read the run's answer any more: it is cancelled rather than left to run on (its own deadline is far past the test's).
    await cancelled;
  });
});

describe('/mcp and storage', () => {
  it('refuses run_code as a tool error naming STORAGE_UNAVAILABLE while session logs cannot be written, and runs again once they can', { timeout: 60_000 }, async () => {
    const r = await startServer();
    running.push(r);
    const { client, transport } = await connect(r);
    const sessions = r.server.core.sessions as { writeState?: () => SinkState; health?: () => Promise<SinkState> };
    const { writeState, health } = sessions;
    // The sink's own state on a full disk (test/security/full-disk.test.ts shows it on a real tmpfs).
    const full: SinkState = { ok: false, code: 'ENOSPC', message: 'no space left on device' };
    sessions.writeState = () => full;
    sessions.health = async () => full;
    try {
      const refused = await runCode(client, "return 'never'");
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^STORAGE_UNAVAILABLE: session logs cannot be written \(ENOSPC\)/);
    } finally {
      sessions.writeState = writeState;
      sessions.health = health;
    }
    const again = await runCode(client, "return 'back'");
    expect(again.structuredContent).toMatchObject({ logs: [], result: 'back' });
    // Only the run that started is in the session's log.
    const page = (await (await fetch(`${r.url}/v1/sessions/mcp-${transport.sessionId}/events`)).json()) as { events: { type: string }[] };
    expect(page.events.map((event) => event.type)).toEqual(['tool/result']);
  });

  it('refuses run_code as a tool error naming STORAGE_QUOTA once the MCP session is at maxSessionBytes; another session still runs', { timeout: 60_000 }, async () => {
    const r = await startServer({ retention: { maxSessionBytes: 20_000 } });
    running.push(r);
    const first = await connect(r);
    expect((await runCode(first.client, "return 'x'.repeat(25000)")).isError).toBeFalsy();
    const refused = await runCode(first.client, "return 'small'");
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^STORAGE_QUOTA: .*retention\.maxSessionBytes 20000/);
    const second = await connect(r);
    expect((await runCode(second.client, "return 'other'")).structuredContent).toMatchObject({ logs: [], result: 'other' });
  });
});
