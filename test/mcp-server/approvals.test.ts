/**
 * Durable runs on `ptc mcp` (a real child over stdio, the MCP SDK client): a client with
 * elicitation is asked about a gated call and the run goes on in place; a client without it
 * gets the paused outcome and answers it with decide_run, also after `ptc mcp` restarted.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_NODE_FLAGS } from '../helpers/serve-cli.ts';
import { cliPath, nodeBin } from './helpers.ts';

let dir: string;
const clients: Client[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ptc-mcp-approvals-'));
  // The built-in write tool needs approval; read does not.
  await writeFile(join(dir, 'ptc.config.json'), JSON.stringify({ approvals: [{ tools: 'write', when: 'always' }] }));
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

async function connect(elicit?: (request: ElicitRequest) => ElicitResult): Promise<Client> {
  const transport = new StdioClientTransport({
    command: nodeBin,
    args: [...CLI_NODE_FLAGS, cliPath, 'mcp', '--config', join(dir, 'ptc.config.json'), '--workspace', join(dir, 'ws'), '--data', join(dir, 'data'), '--runtime', 'in-process'],
    env: { PATH: process.env.PATH ?? '' },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'test', version: '1.0.0' }, elicit === undefined ? {} : { capabilities: { elicitation: { form: {} } } });
  if (elicit !== undefined) client.setRequestHandler(ElicitRequestSchema, async (request) => elicit(request));
  await client.connect(transport);
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const textOf = (result: CallToolResult) => result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');

const WRITE_THEN_READ = (file: string) => `
  await tools.write({ file_path: ${JSON.stringify(file)}, content: "approved\\n" });
  return (await tools.read({ file_path: ${JSON.stringify(file)} })).lines[0].text;`;

describe('ptc mcp: a client with elicitation', () => {
  it('is asked about the gated call and the run goes on in place; a denial reaches the program with its reason', async () => {
    const asked: ElicitRequest['params'][] = [];
    let answer: ElicitResult = { action: 'accept', content: { decision: 'approve' } };
    const client = await connect((request) => (asked.push(request.params), answer));
    const approved = await call(client, 'run_code', { code: WRITE_THEN_READ('in-place.txt') });
    expect(approved.isError).toBeFalsy();
    expect(approved.structuredContent).toMatchObject({ logs: [], result: 'approved' });
    expect(asked).toHaveLength(1);
    expect(asked[0].message).toContain('tools.write (call #1)');
    expect(asked[0].message).toContain('"file_path": "in-place.txt"');
    expect(await readFile(join(dir, 'ws', 'in-place.txt'), 'utf8')).toBe('approved\n');

    answer = { action: 'accept', content: { decision: 'deny', reason: 'no writes today' } };
    const denied = await call(client, 'run_code', {
      code: 'try { await tools.write({ file_path: "no.txt", content: "x" }); } catch (e) { return [e.code, e.message]; }',
    });
    const [code, message] = (denied.structuredContent as { result: [string, string] }).result;
    expect(code).toBe('APPROVAL_DENIED');
    expect(message).toContain('no writes today');
    answer = { action: 'decline' };
    const declined = await call(client, 'run_code', { code: 'try { await tools.write({ file_path: "no.txt", content: "x" }); } catch (e) { return e.code; }' });
    expect(declined.structuredContent).toMatchObject({ logs: [], result: 'APPROVAL_DENIED' });
    await expect(readFile(join(dir, 'ws', 'no.txt'), 'utf8')).rejects.toThrow();
  });
});

describe('ptc mcp: a client without elicitation', () => {
  it('gets the paused outcome, answers it with decide_run, and a second decision is refused', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['run_code', 'decide_run']);
    const paused = await call(client, 'run_code', { code: WRITE_THEN_READ('later.txt') });
    const { callId, pending } = (paused.structuredContent as { paused: { callId: string; pending: unknown[] } }).paused;
    expect(pending).toEqual([{ seq: 1, toolName: 'write', args: { file_path: 'later.txt', content: 'approved\n' } }]);
    expect(textOf(paused)).toContain(`call decide_run with { "callId": "${callId}"`);
    await expect(readFile(join(dir, 'ws', 'later.txt'), 'utf8')).rejects.toThrow();

    const resumed = await call(client, 'decide_run', { callId, decision: 'approve' });
    expect(resumed.isError).toBeFalsy();
    expect(resumed.structuredContent).toMatchObject({ logs: [], result: 'approved' });
    const again = await call(client, 'decide_run', { callId, decision: 'deny' });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/not waiting for a decision/);
    const malformed = await call(client, 'decide_run', { callId, decision: 'maybe' });
    expect(textOf(malformed)).toContain('"approve" or "deny"');
  });

  it('decides a run paused before `ptc mcp` restarted: the journal waited in the data folder', async () => {
    const first = await connect();
    const paused = await call(first, 'run_code', { code: WRITE_THEN_READ('restart.txt') });
    const { callId } = (paused.structuredContent as { paused: { callId: string } }).paused;
    await first.close();
    const second = await connect();
    const denied = await call(second, 'decide_run', { callId, decision: 'deny', reason: 'changed my mind' });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain('APPROVAL_DENIED');
    expect(textOf(denied)).toContain('changed my mind');
    await expect(readFile(join(dir, 'ws', 'restart.txt'), 'utf8')).rejects.toThrow();
  });
});
