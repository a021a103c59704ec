/**
 * Durable runs on `/mcp` (Streamable HTTP, a real server on port 0): the elicitation travels on
 * the run_code request's own stream, and an MCP session decides only its own paused runs.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type Running } from '../services/helpers.ts';

let running: Running;
const clients: Client[] = [];

beforeAll(async () => {
  running = await startServer({ approvals: [{ tools: 'write', when: 'always' }] });
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await running.server.close();
});

async function connect(elicit?: (request: ElicitRequest) => { decision: string; reason?: string }): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' }, elicit === undefined ? {} : { capabilities: { elicitation: { form: {} } } });
  if (elicit !== undefined) client.setRequestHandler(ElicitRequestSchema, async (request) => ({ action: 'accept', content: elicit(request) }));
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', running.url)));
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const WRITE = 'await tools.write({ file_path: "h.txt", content: "x" }); return "wrote";';
/** WRITE, returning the denial's code instead of throwing it: the run ends well however it was decided. */
const WRITE_OR_DENIED = 'try { await tools.write({ file_path: "d.txt", content: "x" }); return "wrote"; } catch (e) { return e.code; }';

describe('/mcp with durable runs', () => {
  it('asks a client with elicitation on its request stream, and the run goes on', async () => {
    const asked: string[] = [];
    const client = await connect((request) => (asked.push(request.params.message), { decision: 'approve' }));
    const result = await call(client, 'run_code', { code: WRITE });
    expect(result.structuredContent).toMatchObject({ logs: [], result: 'wrote' });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('tools.write');
  });

  it('lets a session decide its own paused run, and no other session’s', async () => {
    const [owner, other] = await Promise.all([connect(), connect()]);
    const paused = await call(owner, 'run_code', { code: WRITE_OR_DENIED });
    const { callId } = (paused.structuredContent as { paused: { callId: string } }).paused;
    const refused = await call(other, 'decide_run', { callId, decision: 'approve' });
    expect(refused.isError).toBe(true);
    expect((refused.content[0] as { text: string }).text).toContain('no paused run has callId');
    // Two decisions at once: the one the server takes first resumes the run (either may be it),
    // the other changes nothing.
    const [approved, denied] = await Promise.all([call(owner, 'decide_run', { callId, decision: 'approve' }), call(owner, 'decide_run', { callId, decision: 'deny' })]);
    const resumed = [approved, denied].filter((answer) => answer.isError !== true);
    expect(resumed).toHaveLength(1);
    expect(resumed[0].structuredContent).toMatchObject({ logs: [], result: resumed[0] === approved ? 'wrote' : 'APPROVAL_DENIED' });
    const loser = resumed[0] === approved ? denied : approved;
    expect(loser.isError).toBe(true);
    // Refused before resuming, or by the claim: either way nothing changed.
    expect((loser.content[0] as { text: string }).text).toContain('nothing was changed');
  });
});
