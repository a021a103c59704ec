import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryEventSink } from '../../src/event-sinks/memory-sink.ts';
import { createCodeMode, createToolRegistry, type CodeMode } from '../../entries/index.ts';
import type { ToolRegistry } from '../../src/tool.ts';
import { createBuiltinTools } from '../../src/tools/index.ts';
import { MAY_PAUSE_NOTE } from '../../typings/prepare.ts';
import { createCodeModeMcpServer, type CodeModeMcpServer } from '../../services/mcp-embed.ts';
import { createSessionStore, type SessionStore } from '../../services/session-store.ts';

// The embeddable factory over the SDK's in-memory transport, and the typings budget at its edge.
let workspace: string;
let registry: ToolRegistry;
let sessions: SessionStore;
let codeMode: CodeMode;
let typingsLength: number;
const open: { client: Client; mcp: CodeModeMcpServer }[] = [];

async function connect(typingsBudget: number): Promise<Client> {
  const mcp = createCodeModeMcpServer({ registry, codeMode, sessions, typingsBudget, sessionId: 'embed' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  open.push({ client, mcp });
  return client;
}

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'ptc-mcp-embed-'));
  const sink = createMemoryEventSink();
  sessions = createSessionStore(sink);
  registry = createToolRegistry({ eventSink: sessions });
  for (const tool of createBuiltinTools({ workspace })) registry.register(tool);
  codeMode = createCodeMode({ registry });
  typingsLength = (await codeMode.typings()).length;
});
afterAll(async () => {
  for (const { client, mcp } of open) {
    await client.close();
    await mcp.close();
  }
  await codeMode.close();
  await rm(workspace, { recursive: true, force: true });
});

describe('createCodeModeMcpServer', () => {
  it('puts the whole typings in run_code while they fit the budget exactly', async () => {
    const client = await connect(typingsLength);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['run_code']);
    expect(tools[0].description).toContain(await codeMode.typings());
  });

  it('offers search_tools one character past the budget, and finds the built-in tools by what they do', async () => {
    const client = await connect(typingsLength - 1);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['run_code', 'search_tools']);
    expect(tools[0].description).toContain('There are 5 tools, too many to list here');
    const queries: [string, string][] = [
      ['replace text in a file', 'edit'],
      ['find files matching a pattern', 'glob'],
      ['search file contents with a regular expression', 'grep'],
      ['read lines of a text file', 'read'],
      ['create a new file', 'write'],
    ];
    for (const [query, tool] of queries) {
      const result = (await client.callTool({ name: 'search_tools', arguments: { query, limit: 2 } })) as CallToolResult;
      const names = (result.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name);
      expect(names, query).toContain(tool);
    }
  });

  it('marks a tool gated only by an approvals rule in search_tools results, as in the whole typings', async () => {
    const gatedRegistry = createToolRegistry();
    for (const tool of createBuiltinTools({ workspace })) gatedRegistry.register(tool);
    const codeModeOfRule = createCodeMode({ registry: gatedRegistry, approvals: [{ tools: 'wr*', when: 'always' }] });
    try {
      const mcp = createCodeModeMcpServer({ registry: gatedRegistry, codeMode: codeModeOfRule, sessions, typingsBudget: 1, sessionId: 'gated' });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await mcp.server.connect(serverSide);
      const client = new Client({ name: 'test', version: '1.0.0' });
      await client.connect(clientSide);
      open.push({ client, mcp });
      const result = (await client.callTool({ name: 'search_tools', arguments: { query: 'create a new file', limit: 5 } })) as CallToolResult;
      const found = (result.structuredContent as { tools: { name: string; typings: string }[] }).tools;
      const typingsOf = (name: string) => found.find((tool) => tool.name === name)?.typings;
      expect(typingsOf('write')).toContain(MAY_PAUSE_NOTE);
      expect(typingsOf('edit')).toEqual(expect.any(String));
      expect(typingsOf('edit')).not.toContain(MAY_PAUSE_NOTE);
      expect(await codeModeOfRule.typings()).toContain(MAY_PAUSE_NOTE);
    } finally {
      await codeModeOfRule.close();
    }
  });

  it('runs code with progress over any transport', async () => {
    const client = await connect(100_000);
    const steps: string[] = [];
    const result = (await client.callTool({ name: 'run_code', arguments: { code: 'return (await tools.glob({ pattern: "*" })).paths' } }, undefined, {
      onprogress: (progress) => steps.push(progress.message?.split(' (')[0] ?? ''),
    })) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ logs: [], result: [] });
    expect(steps).toEqual(['glob started', 'glob done']);
  });
});
