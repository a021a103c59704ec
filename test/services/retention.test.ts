/**
 * Retention of JSONL session logs through the service: a session or tenant
 * at its quota gets 507 STORAGE_QUOTA on new runs (other sessions and
 * tenants are not affected), and logs untouched for maxAgeDays are removed,
 * after which the session starts afresh.
 */
import { stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { json, post, startServer, type Running } from './helpers.ts';

const running: Running[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.server.close();
});

/** A run whose stored tool/result holds about `bytes` of rendered text. */
const heavy = (sessionId: string, bytes: number) => ({ code: `return 'x'.repeat(${bytes})`, sessionId });

describe('retention', () => {
  it('a session at maxSessionBytes, then everyone at maxTenantBytes, gets 507 STORAGE_QUOTA on new runs', { timeout: 60_000 }, async () => {
    const r = await startServer({ retention: { maxSessionBytes: 20_000, maxTenantBytes: 70_000 } });
    running.push(r);
    expect((await post(`${r.url}/v1/run`, heavy('a', 25_000))).status).toBe(200);
    const refused = await post(`${r.url}/v1/run`, heavy('a', 10));
    expect(refused.status).toBe(507);
    expect(await json(refused)).toMatchObject({ statusCode: 507, code: 'STORAGE_QUOTA', message: expect.stringMatching(/retention\.maxSessionBytes 20000/) });
    // Another session still runs, until all of them together reach the tenant quota.
    expect((await post(`${r.url}/v1/run`, heavy('b', 25_000))).status).toBe(200);
    expect((await post(`${r.url}/v1/run`, heavy('c', 25_000))).status).toBe(200);
    const full = await post(`${r.url}/v1/run`, heavy('d', 10));
    expect(full.status).toBe(507);
    expect(await json(full)).toMatchObject({ code: 'STORAGE_QUOTA', message: expect.stringMatching(/retention\.maxTenantBytes 70000/) });
  });

  it('one tenant at its quota does not stop another', { timeout: 60_000 }, async () => {
    const tokens = { a: 'token-of-tenant-a-0123456789', b: 'token-of-tenant-b-0123456789' };
    const r = await startServer({
      tenants: [{ name: 'a', token: tokens.a }, { name: 'b', token: tokens.b }],
      retention: { maxTenantBytes: 20_000 },
    });
    running.push(r);
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    expect((await post(`${r.url}/v1/run`, heavy('s', 25_000), as(tokens.a))).status).toBe(200);
    expect((await post(`${r.url}/v1/run`, heavy('other', 10), as(tokens.a))).status).toBe(507);
    // Tenant b's session of the same name, and any other of its sessions, still run.
    expect((await post(`${r.url}/v1/run`, heavy('s', 10), as(tokens.b))).status).toBe(200);
    expect((await post(`${r.url}/v1/run`, heavy('t', 10), as(tokens.b))).status).toBe(200);
  });

  it('removes logs untouched for maxAgeDays; the session then starts afresh', { timeout: 60_000 }, async () => {
    const r = await startServer({ retention: { maxAgeDays: 7, maxSessionBytes: 20_000 } });
    running.push(r);
    expect((await post(`${r.url}/v1/run`, heavy('old', 25_000))).status).toBe(200);
    expect((await post(`${r.url}/v1/run`, heavy('recent', 100))).status).toBe(200);
    const file = (id: string) => path.join(r.config.dataDir, 'sessions', `${id}.jsonl`);
    const eightDaysAgo = new Date(Date.now() - 8 * 24 * 60 * 60 * 1000);
    await utimes(file('old'), eightDaysAgo, eightDaysAgo);
    expect(await r.server.core.retention!.sweep()).toBe(1);
    await expect(stat(file('old'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await stat(file('recent'))).size).toBeGreaterThan(0);
    // Its quota is free again, and its log starts at seq 1.
    const again = await post(`${r.url}/v1/run`, heavy('old', 10));
    expect(again.status).toBe(200);
    const page = await json(fetch(`${r.url}/v1/sessions/old/events`));
    expect(page.events.map((e: { seq: number }) => e.seq)).toEqual([1]);
  });
});
