import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolRegistry } from '../../src/registry.ts';
import { connectMcpServers } from '../../src/mcp/index.ts';
import { statelessMcpHandler, waitForStatus } from './helpers.ts';

// A real Streamable HTTP server (stateless: one McpServer per request), in this process.
function mcpServer(): McpServer {
  const server = new McpServer({ name: 'web', version: '1.0.0' });
  server.registerTool(
    'add',
    {
      description: 'Adds two numbers.',
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
      annotations: { readOnlyHint: true },
    },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  return server;
}

function listen(port: number, seen: (string | undefined)[]): Promise<HttpServer> {
  const serve = statelessMcpHandler(mcpServer);
  const http = createServer((req, res) => {
    seen.push(req.headers.authorization);
    serve(req, res);
  });
  return new Promise((resolve) => http.listen(port, '127.0.0.1', () => resolve(http)));
}

function stop(http: HttpServer): Promise<void> {
  http.closeAllConnections();
  return new Promise((resolve) => http.close(() => resolve()));
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a Streamable HTTP MCP server', () => {
  it('is bridged with its headers, fails clearly when it goes away, and is reconnected when it is back', async () => {
    const seen: (string | undefined)[] = [];
    let http = await listen(0, seen);
    const port = (http.address() as AddressInfo).port;
    cleanups.push(() => stop(http));
    const registry = createToolRegistry();
    const bridge = await connectMcpServers({
      servers: { web: { url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: 'Bearer test-token' } } },
      registry,
      reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
    });
    cleanups.push(() => bridge.close());

    expect(bridge.status()[0]).toMatchObject({ transport: 'http', state: 'connected', tools: ['web__add'] });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((auth) => auth === 'Bearer test-token')).toBe(true);
    expect(await registry.dispatch({ name: 'web__add', arguments: { a: 2, b: 3 } })).toMatchObject({
      isError: false,
      value: { structuredContent: { sum: 5 } },
      content: [{ type: 'text', text: '5' }],
    });

    await stop(http);
    const gone = await registry.dispatch({ name: 'web__add', arguments: { a: 1, b: 1 } });
    expect(gone.isError).toBe(true);
    if (!gone.isError) return;
    expect(gone.error.message).toContain('MCP server "web" could not be reached for "add"; reconnecting: try again shortly.');
    await waitForStatus(bridge, 'web', (s) => s.state === 'reconnecting' && s.failedAttempts >= 2);

    http = await listen(port, seen);
    await waitForStatus(bridge, 'web', (s) => s.state === 'connected');
    expect(await registry.dispatch({ name: 'web__add', arguments: { a: 4, b: 4 } })).toMatchObject({
      isError: false,
      value: { structuredContent: { sum: 8 } },
    });
  });
});
