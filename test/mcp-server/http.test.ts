import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolExecutionResult } from '../../src/tool.ts';
import { startServer, type Running } from '../services/helpers.ts';
import { fixtureConfig } from './helpers.ts';

const TOKEN = 'mcp-test-token-0123456789abcdef';
let running: Running;
let client: Client;
let transport: StreamableHTTPClientTransport;

function connect(token: string | undefined): { client: Client; transport: StreamableHTTPClientTransport } {
  const t = new StreamableHTTPClientTransport(new URL('/mcp', running.url), {
    requestInit: token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
  });
  return { client: new Client({ name: 'test', version: '1.0.0' }), transport: t };
}

function textOf(content: { text: string } | { blob: string }): string {
  return 'text' in content ? content.text : '';
}

async function run(code: string, extra: Parameters<Client['callTool']>[2] = {}): Promise<CallToolResult> {
  return (await client.callTool({ name: 'run_code', arguments: { code, description: 'test' } }, undefined, extra)) as CallToolResult;
}

beforeAll(async () => {
  running = await startServer({ token: TOKEN, mcpServers: { fixture: fixtureConfig() } });
  ({ client, transport } = connect(TOKEN));
  await client.connect(transport);
});
afterAll(async () => {
  await client.close();
  await running.server.close();
});

describe('/mcp over Streamable HTTP', () => {
  it('refuses a client without the bearer token, and one with a wrong token', async () => {
    const bare = await fetch(new URL('/mcp', running.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(bare.status).toBe(401);
    expect(((await bare.json()) as { code: string }).code).toBe('UNAUTHORIZED');
    const wrong = connect('wrong-token-0123456789abcdef');
    await expect(wrong.client.connect(wrong.transport)).rejects.toThrow(/401/);
  });

  it('lists run_code alone, its description the prompt with the whole typings', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['run_code']);
    const [runCode] = tools;
    expect(runCode.description).toContain('## Writing code for run_code');
    expect(runCode.description).toContain('declare const tools');
    expect(runCode.description).toContain('fixture__typed');
    expect(runCode.description).toContain('replace_all?: boolean');
    expect(runCode.description).not.toContain('search_tools');
    expect(runCode.outputSchema?.required).toEqual(['logs']);
    expect(Object.keys(runCode.inputSchema.properties ?? {})).toEqual(['code', 'description', 'timeoutMs']);
  });

  it('runs code calling built-in and upstream MCP tools; structured content plus text; logged under the MCP session', async () => {
    const result = await run(`
      await tools.write({ file_path: "a.txt", content: "one\\ntwo\\n" });
      const page = await tools.read({ file_path: "a.txt" });
      const typed = await tools.fixture__typed({ x: 41 });
      console.log("lines", page.totalLines);
      return { last: page.lines[1].text, next: typed.structuredContent.x + 1 };
    `);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ logs: ['lines 2'], result: { last: 'two', next: 42 } });
    // The run's budgets are the host's: in structuredContent, never in the text the model reads.
    const { stats } = result.structuredContent as { stats: { calls: number; logBytes: number; nestedCalls: { name: string; queuedMs: number; executeMs: number; bytes: number }[] } };
    expect(stats).toMatchObject({ calls: 3, maxCalls: expect.any(Number), logBytes: 'lines 2\n'.length, maxLogBytes: expect.any(Number), heapPeakBytes: expect.any(Number) });
    expect(stats.nestedCalls.map((call) => call.name)).toEqual(['write', 'read', 'fixture__typed']);
    expect(stats.nestedCalls.every((call) => call.queuedMs >= 0 && call.executeMs >= 0 && call.bytes > 0)).toBe(true);
    expect(JSON.stringify(result.content)).not.toContain('nestedCalls');
    expect(result.content).toEqual([expect.objectContaining({ type: 'text', text: expect.stringContaining('lines 2') })]);
    const events = await fetch(new URL(`/v1/sessions/mcp-${transport.sessionId}/events`, running.url), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(events.status).toBe(200);
    const names = ((await events.json()) as { events: { type: string; name: string }[] }).events.filter((e) => e.type === 'tool/ptc-dispatch').map((e) => e.name);
    expect(names).toEqual(['write', 'read', 'fixture__typed']);
  });

  it('answers a failing program with isError and the code-framed message', async () => {
    const result = await run('const x = 1;\nthrow new Error("boom at " + x);');
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const text = (result.content[0] as { text: string }).text;
    expect(text).toContain('boom at 1');
    expect(text).toMatch(/agent\.ts:2/);
    expect(text).toContain('throw new Error("boom at " + x);');
  });

  it('sends a progress notification at the start and end of each nested call, before the result', async () => {
    const messages: string[] = [];
    const result = await run(
      'await tools.fixture__typed({ x: 1 });\ntry { await tools.fixture__fail({}); } catch {}\nreturn "ok";',
      { onprogress: (progress) => messages.push(`${progress.progress} ${progress.message?.replace(/ \(.*\)$/, '')}`) },
    );
    expect(result.structuredContent).toMatchObject({ logs: [], result: 'ok' });
    expect(messages).toEqual(['1 fixture__typed started', '2 fixture__typed done', '3 fixture__fail started', '4 fixture__fail failed']);
  });

  it('cancels the run on notifications/cancelled, as DELETE /v1/runs/:callId does', async () => {
    const ended = new Promise<ToolExecutionResult>((resolve) => {
      const off = running.server.core.registry.hook('tools/post-execute', (exec, result) => {
        if (exec.name === 'run_code') {
          off();
          resolve(result);
        }
        return undefined;
      });
    });
    const controller = new AbortController();
    const call = run('await tools.fixture__slow({});\nreturn "never";', {
      signal: controller.signal,
      onprogress: (progress) => {
        if (progress.message?.startsWith('fixture__slow started')) controller.abort();
      },
    });
    await expect(call).rejects.toThrow();
    const result = await ended;
    if (!result.isError) throw new Error('the run was not cancelled');
    expect(result.error.info?.code).toBe('ABORTED');
    expect(result.error.message).toBe('run_code was cancelled; its 1 nested call(s) have stopped');
  });

  it('serves the typings as resources: the whole .d.ts and one tool', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['ptc://typings']);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['ptc://typings/{tool}']);
    const whole = await client.readResource({ uri: 'ptc://typings' });
    const served = await fetch(new URL('/v1/typings', running.url), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(textOf(whole.contents[0])).toBe(await served.text());
    const one = await client.readResource({ uri: 'ptc://typings/fixture__typed' });
    const text = textOf(one.contents[0]);
    expect(text).toContain('interface ToolArgsMap');
    expect(text).toContain('fixture__typed');
    expect(text).not.toContain('fixture__fail');
    // The code once, as the client's SDK writes it; the server's text is only the reason.
    await expect(client.readResource({ uri: 'ptc://typings/nope' })).rejects.toThrow(/^MCP error -32602: no resource "ptc:\/\/typings\/nope": read ptc:\/\/typings or/);
  });

  it('sends tools/list_changed when an upstream changes its tools', async () => {
    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
    await run('await tools.fixture__set_extra({ present: true });');
    await changed;
    const { tools } = await client.listTools();
    expect(tools[0].description).toContain('fixture__extra');
  });
});
