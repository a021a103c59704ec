/**
 * Named tokens, one tenant each, through a real server: the same sessionId
 * and callId in two tenants are two sessions and two runs; one tenant can
 * neither read the other's events nor cancel its runs, nor run in an isolate
 * the other's session kept.
 */
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../services/config.ts';
import { json, post, readSse, startServer, tempDir, type Running } from './helpers.ts';

const ACME = 'acme-token-0123456789';
const GLOBEX = 'globex-token-0123456789';
const as = (token: string) => ({ authorization: `Bearer ${token}` });

describe('tenancy', () => {
  let running: Running;
  beforeAll(async () => {
    running = await startServer({
      pool: { burstThreads: 0, sessionIsolates: 16 },
      tenants: [
        { name: 'acme', token: ACME },
        { name: 'globex', token: GLOBEX },
      ],
    });
  });
  afterAll(() => running.server.close());

  it('keeps the same sessionId and callId apart per tenant, in responses, event reads and on disk', async () => {
    const acme = await json(post(`${running.url}/v1/run`, { code: "await tools.glob({ pattern: '*' });\nreturn 'acme'", sessionId: 's', callId: 'same' }, as(ACME)));
    const globex = await json(post(`${running.url}/v1/run`, { code: "return 'globex'", sessionId: 's', callId: 'same' }, as(GLOBEX)));
    // Each tenant sees its own ids, never the prefix.
    expect(acme).toMatchObject({ callId: 'same', sessionId: 's', value: { result: 'acme' } });
    expect(globex).toMatchObject({ callId: 'same', sessionId: 's', value: { result: 'globex' } });
    const ids = (e: { sessionId: string; callId: string; rootCallId?: string; parentCallId?: string }) => [e.sessionId, e.callId, e.rootCallId, e.parentCallId];
    expect(acme.events.map(ids)).toEqual([
      ['s', 'same:ptc:1', 'same', 'same'],
      ['s', 'same:ptc:1', 'same', 'same'],
      ['s', 'same', undefined, undefined],
    ]);
    expect(acme.stats.nestedCalls.map((call: { callId: string }) => call.callId)).toEqual(['same:ptc:1']);

    const read = async (token: string) => (await json(fetch(`${running.url}/v1/sessions/s/events`, { headers: as(token) }))).events;
    const acmeEvents = await read(ACME);
    const globexEvents = await read(GLOBEX);
    expect(acmeEvents.map(ids)).toEqual(acme.events.map(ids));
    expect(acmeEvents.at(-1)).toMatchObject({ type: 'tool/result', sessionId: 's', callId: 'same', seq: 3 });
    expect(JSON.stringify(acmeEvents)).toContain('acme');
    expect(JSON.stringify(acmeEvents)).not.toContain('globex');
    expect(globexEvents).toHaveLength(1);
    expect(JSON.stringify(globexEvents)).not.toContain('acme');

    const files = (await readdir(path.join(running.config.dataDir, 'sessions'))).sort();
    expect(files).toEqual(['acme_s.jsonl', 'globex_s.jsonl']);
  });

  it("never lends a tenant's kept isolate to another tenant's session of the same name", async () => {
    const reused = () => running.server.core.runtime.status().isolatesReused ?? 0;
    const run = (token: string, code: string) => json(post(`${running.url}/v1/run`, { code, sessionId: 'kept' }, as(token)));
    expect(await run(ACME, "globalThis.mark = 'acme'; return 1")).toMatchObject({ value: { result: 1 } });
    const before = reused();
    expect(await run(GLOBEX, 'return typeof mark')).toMatchObject({ value: { result: 'undefined' } });
    expect(reused()).toBe(before);
    // Acme's own next run takes the isolate it left, in a fresh context.
    expect(await run(ACME, 'return typeof mark')).toMatchObject({ value: { result: 'undefined' } });
    expect(reused()).toBe(before + 1);
  });

  it('lets a tenant cancel only its own runs, and reuse a callId another tenant has in flight', async () => {
    const slow = await post(
      `${running.url}/v1/run`,
      { code: "console.log('started');\nawait new Promise((resolve) => setTimeout(resolve, 20000));", sessionId: 'c', callId: 'x' },
      { ...as(ACME), accept: 'text/event-stream' },
    );
    let during: Promise<unknown[]> | undefined;
    const events = await readSse(slow, (event) => {
      if (event.event !== 'log') return;
      during = (async () => {
        const foreignCancel = await fetch(`${running.url}/v1/runs/x`, { method: 'DELETE', headers: as(GLOBEX) });
        const sameCallId = await post(`${running.url}/v1/run`, { code: 'return 1', callId: 'x' }, as(GLOBEX));
        const ownCancel = await fetch(`${running.url}/v1/runs/x`, { method: 'DELETE', headers: as(ACME) });
        return [foreignCancel.status, (await json(foreignCancel)).code, sameCallId.status, (await json(sameCallId)).callId, ownCancel.status];
      })();
    });
    expect(await during).toEqual([404, 'RUN_NOT_FOUND', 200, 'x', 202]);
    expect(events.at(-1)).toMatchObject({ event: 'result', data: { callId: 'x', sessionId: 'c', isError: true, error: { info: { code: 'ABORTED' } } } });
  });

  it('refuses a request without a known token, and ids too long once prefixed', async () => {
    expect((await post(`${running.url}/v1/run`, { code: 'return 1' }, as('not-a-tenant-token-000'))).status).toBe(401);
    const long = await post(`${running.url}/v1/run`, { code: 'return 1', sessionId: 'a'.repeat(128) }, as(ACME));
    expect(long.status).toBe(400);
    expect((await json(long)).message).toMatch(/sessionId is too long for this tenant: use at most 123 characters/);
  });
});

describe('auth.tokens configuration', () => {
  const load = async (file: object, env: NodeJS.ProcessEnv = {}) => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'ptc.config.json'), JSON.stringify(file));
    return () => loadConfig({ cwd, env });
  };
  const token = 'x'.repeat(20);

  it('reads named tokens', async () => {
    const config = (await load({ auth: { tokens: [{ name: 'acme', token }] } }))();
    expect(config.tenants).toEqual([{ name: 'acme', token }]);
    expect(config.token).toBeUndefined();
  });

  it('names every problem: bad names, short tokens, duplicates, and a single token as well', async () => {
    expect(await load({ auth: { tokens: [{ name: 'Acme', token }] } })).toThrow(/auth\.tokens\.0\.name must match/);
    expect(await load({ auth: { tokens: [{ name: 'acme', token: 'short' }] } })).toThrow(/auth\.tokens\.0\.token must NOT have fewer than 16/);
    const duplicate = await load({ auth: { tokens: [{ name: 'acme', token }, { name: 'acme', token: 'y'.repeat(20) }] } });
    expect(duplicate).toThrow(/names tenant "acme" twice/);
    expect(await load({ auth: { tokens: [{ name: 'a', token }, { name: 'b', token }] } })).toThrow(/same token/);
    const both = await load({ auth: { tokens: [{ name: 'acme', token }] } }, { PTC_TOKEN: 'z'.repeat(20) });
    expect(both).toThrow(ConfigError);
    expect(both).toThrow(/use one of them/);
  });
});
