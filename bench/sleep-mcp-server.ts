/**
 * A one-tool MCP server over stdio for the capacity benches: `sleep` answers
 * `{slept: ms}` after `ms` milliseconds and does nothing else, like a slow
 * HTTP API or database a program waits on.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';

const server = new McpServer({ name: 'sleepy', version: '1.0.0' });
server.registerTool(
  'sleep',
  {
    description: 'Waits ms milliseconds, then answers.',
    inputSchema: { ms: z.number().int().min(0).max(60_000) },
    outputSchema: { slept: z.number() },
    annotations: { readOnlyHint: true },
  },
  async ({ ms }) => {
    await sleep(ms);
    return { content: [{ type: 'text', text: String(ms) }], structuredContent: { slept: ms } };
  },
);
await server.connect(new StdioServerTransport());
