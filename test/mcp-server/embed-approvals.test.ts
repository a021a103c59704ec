/**
 * Durable runs through the embeddable MCP server (`createCodeModeMcpServer({ durable })`) over
 * the SDK's in-memory transport, wired from the package entries as a host would.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createCodeMode, createInPlaceApprovers, createMemoryEventSink, createToolRegistry, defineTool } from '../../entries/index.ts';
import { createCodeModeMcpServer } from '../../entries/mcp.ts';
import { createSessionStore } from '../../services/session-store.ts';

const sessions = createSessionStore(createMemoryEventSink());
const registry = createToolRegistry({ eventSink: sessions });
const sent: string[] = [];
registry.register(
  defineTool({
    name: 'send',
    description: 'Sends a message.',
    parameters: { to: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
    needsApproval: true,
    execute: async (args) => (sent.push(args.to), `sent to ${args.to}`),
  }),
);
const approvers = createInPlaceApprovers();
const codeMode = createCodeMode({ registry, approveInPlace: approvers.approve });
const durable = { codeMode, approvers, mayPause: () => true };
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
  await codeMode.close();
});

async function connect(elicits: boolean): Promise<Client> {
  const mcp = createCodeModeMcpServer({ registry, codeMode, sessions, durable });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' }, elicits ? { capabilities: { elicitation: { form: {} } } } : {});
  if (elicits) client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { decision: 'approve' } }));
  await client.connect(clientSide);
  closers.push(async () => {
    await client.close();
    await mcp.close();
  });
  return client;
}

const run = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;

describe('createCodeModeMcpServer with durable runs', () => {
  it('asks a client with elicitation in place, and pauses for one without, which decides with decide_run', async () => {
    const asking = await connect(true);
    expect((await run(asking, 'run_code', { code: 'return await tools.send({ to: "ana" });' })).structuredContent).toMatchObject({ logs: [], result: 'sent to ana' });

    const plain = await connect(false);
    expect((await plain.listTools()).tools.map((tool) => tool.name)).toEqual(['run_code', 'decide_run']);
    const paused = await run(plain, 'run_code', { code: 'return await tools.send({ to: "bo" });' });
    const { callId } = (paused.structuredContent as { paused: { callId: string } }).paused;
    expect(sent).toEqual(['ana']);
    expect((await run(plain, 'decide_run', { callId, decision: 'approve' })).structuredContent).toMatchObject({ logs: [], result: 'sent to bo' });
    expect(sent).toEqual(['ana', 'bo']);
  });
});
