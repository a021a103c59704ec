import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_NODE_FLAGS } from '../helpers/serve-cli.ts';
import { catalogueConfig, cliPath, nodeBin } from './helpers.ts';

// `ptc mcp` spawned as a desktop client would, with a 300-tool upstream: over the typings budget.
let dir: string;
let client: Client;
let stderr = '';
const transportErrors: Error[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ptc-mcp-stdio-'));
  await writeFile(join(dir, 'ptc.config.json'), JSON.stringify({ mcpServers: { cat: catalogueConfig(300) } }));
  const transport = new StdioClientTransport({
    command: nodeBin,
    args: [...CLI_NODE_FLAGS, cliPath, 'mcp', '--config', join(dir, 'ptc.config.json'), '--workspace', join(dir, 'ws'), '--data', join(dir, 'data'), '--runtime', 'in-process'],
    env: { PATH: process.env.PATH ?? '' },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  client = new Client({ name: 'test', version: '1.0.0' });
  // A line on stdout that is not protocol would surface here.
  client.onerror = (error) => transportErrors.push(error);
  await client.connect(transport);
});
afterAll(async () => {
  await client.close();
  await rm(dir, { recursive: true, force: true });
});

async function run(code: string): Promise<CallToolResult> {
  return (await client.callTool({ name: 'run_code', arguments: { code } })) as CallToolResult;
}

describe('ptc mcp over stdio', () => {
  it('offers search_tools when the typings exceed the budget, and run_code says to search first', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['run_code', 'search_tools']);
    const description = tools[0].description ?? '';
    expect(description).toContain('call `search_tools`');
    expect(description).toContain('There are 305 tools');
    expect(description).toContain('declare const tools');
    expect(description).not.toContain('cat__github_create_issue');
    expect(description.length).toBeLessThan(16_000);
  });

  it('search_tools returns the typings of the best matches as text and structured content', async () => {
    const result = (await client.callTool({ name: 'search_tools', arguments: { query: 'open a new bug report on GitHub', limit: 3 } })) as CallToolResult;
    const { tools } = result.structuredContent as { tools: { name: string; typings: string }[] };
    expect(tools).toHaveLength(3);
    expect(tools[0].name).toBe('cat__github_create_issue');
    expect(tools[0].typings).toContain('interface ToolArgsMap {');
    expect(tools[0].typings).toContain('interface ToolOutputMap {');
    expect(tools[0].typings).toContain('Create (add, post, send, open) a new issue');
    expect((result.content[0] as { text: string }).text).toContain(tools[0].typings);
    const bad = (await client.callTool({ name: 'search_tools', arguments: { query: 'x', limit: 21 } })) as CallToolResult;
    expect(bad.isError).toBe(true);
  });

  it('runs code calling a built-in tool and the upstream tools it found', async () => {
    const result = await run(`
      await tools.write({ file_path: "n.txt", content: "hi\\n" });
      const made = await tools.cat__github_create_issue({ name: "crash on start" });
      return { echo: made.structuredContent, read: (await tools.read({ file_path: "n.txt" })).lines[0].text };
    `);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      logs: [],
      result: { echo: { tool: 'github_create_issue', args: { name: 'crash on start' } }, read: 'hi' },
      stats: { calls: 3, resultBytes: expect.any(Number), nestedCalls: [{ name: 'write' }, { name: 'cat__github_create_issue' }, { name: 'read' }] },
    });
    expect(await readFile(join(dir, 'ws', 'n.txt'), 'utf8')).toBe('hi\n');
  });

  it('answers a failing program with the code-framed message', async () => {
    const result = await run('await tools.cat__nope({});');
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/tools\.cat__nope is not a function[\s\S]*> 1 \| await tools\.cat__nope/);
  });

  it('serves one tool\'s typings as a resource', async () => {
    const one = await client.readResource({ uri: 'ptc://typings/cat__slack_create_message' });
    expect(JSON.stringify(one.contents[0])).toContain('cat__slack_create_message: ({');
  });

  it('keeps stdout for the protocol: logs went to stderr', () => {
    expect(transportErrors).toEqual([]);
    expect(stderr).toContain('ptc mcp: serving on stdio');
  });
});

describe('ptc mcp when the client closes stdin right after writing', () => {
  it('answers every call it received, then exits 0', async () => {
    const child = spawn(
      nodeBin,
      [...CLI_NODE_FLAGS, cliPath, 'mcp', '--workspace', join(dir, 'ws2'), '--data', join(dir, 'data2'), '--runtime', 'in-process', '--log-level', 'silent'],
      { stdio: ['pipe', 'pipe', 'inherit'], env: { PATH: process.env.PATH ?? '' } },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run_code', arguments: { code: 'return 6 * 7' } } },
    ];
    child.stdin.end(messages.map((m) => JSON.stringify(m)).join('\n') + '\n');
    // With the signal and the output, so that a failure shows how the server ended and what it said.
    expect({ ...(await exited), stdout }).toEqual({ code: 0, signal: null, stdout: expect.any(String) });
    const answers = stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: number; result: { structuredContent?: unknown } });
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[1].result.structuredContent).toMatchObject({ logs: [], result: 42 });
  });
});

describe('ptc mcp when a message is over the read limit of the SDK', () => {
  it('ends the session and says why on stderr, not "stdin closed"', async () => {
    const child = spawn(
      nodeBin,
      [...CLI_NODE_FLAGS, cliPath, 'mcp', '--workspace', join(dir, 'ws4'), '--data', join(dir, 'data4'), '--runtime', 'in-process', '--log-level', 'error'],
      { stdio: ['pipe', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '' } },
    );
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdin.on('error', () => undefined);
    // 11 MiB without a newline: more than the 10 MiB the SDK buffers for one message.
    child.stdin.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"${'x'.repeat(11 * 1024 * 1024)}`);
    expect(await exited).toBe(0);
    expect(errors).toContain('the client sent a message over the 10 MiB the MCP SDK reads at once; the session ends');
  });
});

describe('ptc mcp on SIGTERM while programs compute', () => {
  it('cancels them past the grace period and exits 0, not by a signal', { timeout: 60_000 }, async () => {
    const RUNS = 4;
    await writeFile(join(dir, 'grace.config.json'), JSON.stringify({ shutdownGraceMs: 100 }));
    const child = spawn(
      nodeBin,
      [...CLI_NODE_FLAGS, cliPath, 'mcp', '--config', join(dir, 'grace.config.json'), '--workspace', join(dir, 'ws3'), '--data', join(dir, 'data3'), '--runtime', 'in-process', '--log-level', 'silent'],
      { stdio: ['pipe', 'pipe', 'inherit'], env: { PATH: process.env.PATH ?? '' } },
    );
    const exited = new Promise<[number | null, string | null]>((resolve) => child.on('exit', (code, signal) => resolve([code, signal])));
    // Each call's progress notifications come while its program runs: after its second (the call ended), it spins.
    let progress = 0;
    const spinning = new Promise<void>((resolve) => {
      let buffered = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) if ((JSON.parse(line) as { method?: string }).method === 'notifications/progress' && ++progress === 2 * RUNS) resolve();
      });
    });
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      ...Array.from({ length: RUNS }, (_, i) => ({
        jsonrpc: '2.0',
        id: 2 + i,
        method: 'tools/call',
        params: { name: 'run_code', arguments: { code: "await tools.glob({ pattern: '*' });\nwhile (true) {}" }, _meta: { progressToken: `p${i}` } },
      })),
    ];
    child.stdin.write(messages.map((m) => JSON.stringify(m)).join('\n') + '\n');
    await spinning;
    child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
  });
});
