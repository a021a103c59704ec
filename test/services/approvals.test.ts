/**
 * Durable runs over HTTP on a real server: a gated call pauses POST /v1/run, the run is listed
 * and decided (JSON and SSE), survives a restart of the server on the same data folder, and is
 * rolled back; tenants see only their own paused runs, and every refusal (HTTP or /mcp) names the
 * callId the tenant sent, never its stored, prefixed form.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { CodeMode } from '../../src/code-mode/code-mode.ts';
import { json, post, readSse, startServer, tempDir, type Running } from './helpers.ts';

let running: Running | undefined;
afterEach(async () => {
  await running?.server.close();
  running = undefined;
});

const gated = { approvals: [{ tools: 'write', when: 'always' as const }] };
const PROGRAM = `await tools.write({ file_path: 'a.txt', content: 'hi' });\nreturn (await tools.read({ file_path: 'a.txt' })).lines[0].text;`;
const get = (url: string, headers: Record<string, string> = {}) => json(fetch(url, { headers }));

/**
 * Makes the next `durableStatus` read hold its (paused) answer until `release`: a decision that
 * passed its pre-check then finds the run decided by another. `checked` resolves once it read.
 */
function holdNextStatusRead(server: Running['server']): { checked: Promise<void>; release: () => void } {
  const codeMode = server.core.codeMode as { durableStatus: CodeMode['durableStatus'] };
  const original = codeMode.durableStatus;
  let checked!: () => void;
  const read = new Promise<void>((resolve) => (checked = resolve));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  codeMode.durableStatus = async (callId) => {
    codeMode.durableStatus = original;
    const status = await original(callId);
    checked();
    await held;
    return status;
  };
  return { checked: read, release };
}

const ACME_TOKEN = 'acme-token-0123456789';
const acme = { authorization: `Bearer ${ACME_TOKEN}` };
/** An error answer as [statusCode, code, message]. */
const refusal = async (response: Promise<Response>) => {
  const body = await json(response);
  return [body.statusCode, body.code, body.message];
};

describe('durable runs over HTTP', () => {
  it('pauses POST /v1/run, lists it, answers 400/404 for bad decisions, resumes on approval and then answers 409', async () => {
    running = await startServer(gated);
    const { url } = running;
    const paused = await post(`${url}/v1/run`, { code: PROGRAM, callId: 'c1', sessionId: 's1' });
    expect(paused.status).toBe(200);
    const body = await json(paused);
    const pending = [{ seq: 1, toolName: 'write', args: { file_path: 'a.txt', content: 'hi' } }];
    expect(body).toMatchObject({ callId: 'c1', isError: false, paused: { callId: 'c1', pending }, value: { paused: { callId: 'c1', pending } } });
    expect(body.events.map((event: { type: string }) => event.type)).toEqual(['run/paused', 'tool/result']);
    expect(await get(`${url}/v1/runs/c1`)).toMatchObject({ callId: 'c1', sessionId: 's1', state: 'paused', pending });
    expect(await get(`${url}/v1/approvals`)).toMatchObject({ approvals: [{ callId: 'c1', sessionId: 's1', description: 'HTTP run', pending }] });

    expect((await post(`${url}/v1/runs/c1/decision`, { decision: 'maybe' })).status).toBe(400);
    expect(await json(post(`${url}/v1/runs/nope/decision`, { decision: 'approve' }))).toMatchObject({ statusCode: 404, code: 'RUN_NOT_FOUND' });

    const resumed = await json(post(`${url}/v1/runs/c1/decision`, { decision: 'approve', by: 'ana' }));
    expect(resumed).toMatchObject({ callId: 'c1', sessionId: 's1', isError: false, value: { result: 'hi' } });
    expect(resumed.events.map((event: { type: string }) => event.type)).toEqual([
      'run/resumed',
      'tool/ptc-dispatch-start',
      'tool/ptc-dispatch',
      'tool/ptc-dispatch-start',
      'tool/ptc-dispatch',
      'tool/result',
    ]);
    expect(resumed.events[0]).toMatchObject({ decision: 'approve', by: 'ana' });
    expect(await json(post(`${url}/v1/runs/c1/decision`, { decision: 'approve' }))).toMatchObject({ statusCode: 409, code: 'RUN_NOT_PAUSED' });
    expect(await get(`${url}/v1/approvals`)).toEqual({ approvals: [] });
    expect(await get(`${url}/v1/runs/c1`)).toMatchObject({ state: 'ok' });

    const rollback = await json(post(`${url}/v1/runs/c1/rollback`, {}));
    expect(rollback).toEqual({
      callId: 'c1',
      reverted: [],
      notReverted: [
        { seq: 2, toolName: 'read', reason: 'the tool has no revert' },
        { seq: 1, toolName: 'write', reason: 'the tool has no revert' },
      ],
    });
  });

  it('resumes the run once when two decisions arrive together; the other answers 409 RUN_NOT_PAUSED', async () => {
    running = await startServer(gated);
    const { url } = running;
    await json(post(`${url}/v1/run`, { code: PROGRAM, callId: 'c5' }));
    const answers = await Promise.all([1, 2].map(() => post(`${url}/v1/runs/c5/decision`, { decision: 'approve' }).then(async (response) => [response.status, await json(response)] as const)));
    expect(answers.map(([status]) => status).sort()).toEqual([200, 409]);
    const [, refused] = answers.find(([status]) => status === 409)!;
    expect(refused).toMatchObject({ code: 'RUN_NOT_PAUSED' });
    const [, resumed] = answers.find(([status]) => status === 200)!;
    expect(resumed).toMatchObject({ isError: false, value: { result: 'hi' } });
  });

  it('leaves the ledger to the winner when a losing decision passed the pre-check before the claim', async () => {
    running = await startServer(gated);
    const { url, server } = running;
    await json(post(`${url}/v1/run`, { code: PROGRAM, callId: 'c6' }));
    // The loser's pre-check reads the run paused, then waits while the winner claims, resumes and ends it.
    const { checked, release } = holdNextStatusRead(server);
    const loser = post(`${url}/v1/runs/c6/decision`, { decision: 'deny' });
    await checked;
    expect(await json(post(`${url}/v1/runs/c6/decision`, { decision: 'approve' }))).toMatchObject({ isError: false, value: { result: 'hi' } });
    expect(await get(`${url}/v1/runs/c6`)).toMatchObject({ state: 'ok' });
    release();
    expect(await json(loser)).toMatchObject({ statusCode: 409, code: 'RUN_NOT_PAUSED' });
    expect(await get(`${url}/v1/runs/c6`)).toMatchObject({ state: 'ok' });
  });

  it('streams approval/requested, and the decision as SSE ending in the resumed result', async () => {
    running = await startServer(gated);
    const { url } = running;
    const first = await readSse(await post(`${url}/v1/run`, { code: PROGRAM, callId: 'c2' }, { accept: 'text/event-stream' }));
    expect(first.map((event) => event.event)).toEqual(['approval/requested', 'result']);
    expect(first[0]!.data).toMatchObject({ type: 'run/paused', callId: 'c2', pending: [{ seq: 1, toolName: 'write' }] });
    const second = await readSse(await post(`${url}/v1/runs/c2/decision`, { decision: 'deny', reason: 'no writes' }, { accept: 'text/event-stream' }));
    expect(second.map((event) => event.event)).toEqual(['run/resumed', 'result']);
    expect(second[1]!.data).toMatchObject({ isError: true, error: { info: { code: 'CODE_RUN_FAILED', kind: 'exception' } } });
    expect((second[1]!.data as { error: { message: string } }).error.message).toContain('no writes');
  });

  it('keeps a paused run across a restart of the server on the same data folder', async () => {
    const cwd = await tempDir();
    const folders = { dataDir: `${cwd}/data`, workspace: `${cwd}/workspace` };
    running = await startServer({ ...gated, ...folders });
    await json(post(`${running.url}/v1/run`, { code: PROGRAM, callId: 'c3' }));
    await running.server.close();
    running = await startServer({ ...gated, ...folders });
    expect(await get(`${running.url}/v1/runs/c3`)).toMatchObject({ state: 'paused' });
    const resumed = await json(post(`${running.url}/v1/runs/c3/decision`, { decision: 'approve' }));
    expect(resumed).toMatchObject({ isError: false, value: { result: 'hi' } });
  });

  it("scopes paused runs to the tenant: another tenant's run is not listed and answers 404", async () => {
    const acme = { authorization: 'Bearer acme-token-0123456789' };
    const globex = { authorization: 'Bearer globex-token-0123456789' };
    running = await startServer({
      ...gated,
      tenants: [
        { name: 'acme', token: 'acme-token-0123456789' },
        { name: 'globex', token: 'globex-token-0123456789' },
      ],
    });
    const { url } = running;
    const body = await json(post(`${url}/v1/run`, { code: PROGRAM, callId: 'c4' }, acme));
    expect(body.paused).toMatchObject({ callId: 'c4' });
    expect(body.content[0].text).not.toContain('acme_');
    expect(await get(`${url}/v1/approvals`, acme)).toMatchObject({ approvals: [{ callId: 'c4' }] });
    expect(await get(`${url}/v1/approvals`, globex)).toEqual({ approvals: [] });
    expect(await json(post(`${url}/v1/runs/c4/decision`, { decision: 'approve' }, globex))).toMatchObject({ statusCode: 404 });
    expect(await json(post(`${url}/v1/runs/c4/decision`, { decision: 'approve' }, acme))).toMatchObject({ value: { result: 'hi' } });
  });

  it("names the id the client sent, never the tenant's stored one, in the refusals of rollback, decision and GET", async () => {
    running = await startServer({ ...gated, tenants: [{ name: 'acme', token: ACME_TOKEN }] });
    const { url, config } = running;
    expect(await refusal(post(`${url}/v1/runs/nosuch/rollback`, {}, acme))).toEqual([404, 'RUN_NOT_FOUND', 'no paused or resumed run has callId "nosuch"']);
    expect(await refusal(post(`${url}/v1/runs/nosuch/decision`, { decision: 'approve' }, acme))).toEqual([404, 'RUN_NOT_FOUND', 'no paused run has callId "nosuch"']);

    await json(post(`${url}/v1/run`, { code: PROGRAM, callId: 'pausedacme' }, acme));
    expect(await json(post(`${url}/v1/runs/pausedacme/rollback`, {}, acme))).toMatchObject({ callId: 'pausedacme' });
    expect(await refusal(post(`${url}/v1/runs/pausedacme/rollback`, {}, acme))).toEqual([
      409,
      'RUN_NOT_PAUSED',
      'run "pausedacme" is rolled-back and cannot be rolled back: it is resuming, or was rolled back already; nothing was changed',
    ]);
    expect(await refusal(post(`${url}/v1/runs/pausedacme/decision`, { decision: 'approve' }, acme))).toEqual([
      409,
      'RUN_NOT_PAUSED',
      'run "pausedacme" is rolled-back, not waiting for a decision; nothing was changed',
    ]);

    // A journal that cannot be read, on each route that reads it.
    await json(post(`${url}/v1/run`, { code: PROGRAM, callId: 'broken' }, acme));
    await writeFile(path.join(config.dataDir, 'journals', 'acme_broken.json'), '{');
    const corrupt = [500, 'JOURNAL_CORRUPT', 'the journal of run "broken" cannot be read (it is not JSON: truncated or overwritten); nothing was run: start the work again as a new run'];
    expect(await refusal(fetch(`${url}/v1/runs/broken`, { headers: acme }))).toEqual(corrupt);
    expect(await refusal(post(`${url}/v1/runs/broken/decision`, { decision: 'approve' }, acme))).toEqual(corrupt);
    expect(await refusal(post(`${url}/v1/runs/broken/rollback`, {}, acme))).toEqual(corrupt);
  });

  it("names the client's callId when a tenant's decision loses the race to another", async () => {
    running = await startServer({ ...gated, tenants: [{ name: 'acme', token: ACME_TOKEN }] });
    const { url, server } = running;
    await json(post(`${url}/v1/run`, { code: PROGRAM, callId: 'c7' }, acme));
    const { checked, release } = holdNextStatusRead(server);
    const loser = post(`${url}/v1/runs/c7/decision`, { decision: 'deny' }, acme);
    await checked;
    expect(await json(post(`${url}/v1/runs/c7/decision`, { decision: 'approve' }, acme))).toMatchObject({ isError: false, value: { result: 'hi' } });
    release();
    expect(await refusal(loser)).toEqual([409, 'RUN_NOT_PAUSED', 'run "c7" is finished and cannot be decided: it is not paused (decided already, or resuming); nothing was changed']);
  });

  it("names the client's callId in decide_run's refusals on /mcp", async () => {
    running = await startServer({ ...gated, tenants: [{ name: 'acme', token: ACME_TOKEN }] });
    const { url, server, config } = running;
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: acme } }));
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
    const pause = async () => ((await call('run_code', { code: PROGRAM })).structuredContent as { paused: { callId: string } }).paused.callId;
    const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;
    try {
      // Decided over HTTP between decide_run's read and its claim.
      const raced = await pause();
      const { checked, release } = holdNextStatusRead(server);
      const loser = call('decide_run', { callId: raced, decision: 'deny' });
      await checked;
      expect(await json(post(`${url}/v1/runs/${raced}/decision`, { decision: 'approve' }, acme))).toMatchObject({ isError: false });
      release();
      const refused = await loser;
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toBe(`run "${raced}" is finished and cannot be decided: it is not paused (decided already, or resuming); nothing was changed`);

      const broken = await pause();
      await writeFile(path.join(config.dataDir, 'journals', `acme_${broken}.json`), '{');
      const corrupt = await call('decide_run', { callId: broken, decision: 'approve' });
      expect(corrupt.isError).toBe(true);
      expect(textOf(corrupt)).toBe(`the journal of run "${broken}" cannot be read (it is not JSON: truncated or overwritten); nothing was run: start the work again as a new run`);
    } finally {
      await client.close();
    }
  });
});
