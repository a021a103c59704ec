/**
 * Retention in PostgreSQL mode: each session's row counts the bytes of its
 * events, a tenant's total is the sum of its sessions' rows, and expired
 * sessions go with one DELETE … WHERE, events and spill included.
 */
import { describe, expect, it } from 'vitest';
import { createPostgresEventSink } from '../../services/postgres/event-sink.ts';
import { createPostgresSessionUsage } from '../../services/postgres/usage.ts';
import { createRetention } from '../../services/retention.ts';
import { toolResultEvent as result, useTestDatabase } from './test-database.ts';

const { open } = useTestDatabase();

describe('retention in PostgreSQL', () => {
  it('counts bytes per session and per tenant prefix, answers 507 at a quota, and removes expired sessions with their events', async () => {
    const db = await open();
    const sink = createPostgresEventSink(db);
    const usage = createPostgresSessionUsage(db);
    for (let i = 0; i < 3; i++) await sink.append(result('acme_one', `c${i}`, 'x'.repeat(10_000)));
    await sink.append(result('acme_two', 'c', 'y'.repeat(5_000)));
    // `_` is literal in a prefix: "acmeXone" is not acme's.
    await sink.append(result('acmeXone', 'c', 'z'.repeat(50_000)));
    await sink.flush('acme_one');

    const one = await usage.sessionBytes('acme_one');
    expect(one).toBeGreaterThan(30_000);
    expect(one).toBeLessThan(31_000);
    const acme = await usage.tenantBytes('acme_');
    expect(acme - one).toBeGreaterThan(5_000);
    expect(acme).toBeLessThan(37_000);
    expect(await usage.tenantBytes('')).toBeGreaterThan(acme + 50_000);

    const retention = createRetention(usage, { maxSessionBytes: 20_000, maxTenantBytes: 1_000_000, maxAgeDays: 30 });
    try {
      await expect(retention.admit('acme_one', 'acme_')).rejects.toMatchObject({ statusCode: 507, code: 'STORAGE_QUOTA' });
      await expect(retention.admit('acme_two', 'acme_')).resolves.toBeUndefined();

      // acme_one last had an event 40 days ago.
      await db.query("UPDATE ptc_sessions SET changed_at = now() - interval '40 days' WHERE session_id = 'acme_one'");
      await db.query("INSERT INTO ptc_spill (session_id, call_id, body) VALUES ('acme_one', 'c0', '\\x00')");
      expect(await retention.sweep()).toBe(1);
      const left = await db.query<{ session_id: string }>('SELECT DISTINCT session_id FROM ptc_events');
      expect(left.rows.map((row) => row.session_id).sort()).toEqual(['acmeXone', 'acme_two']);
      expect((await db.query("SELECT 1 FROM ptc_spill WHERE session_id = 'acme_one'")).rowCount).toBe(0);
      expect(await usage.sessionBytes('acme_one')).toBe(0);
      await expect(retention.admit('acme_one', 'acme_')).resolves.toBeUndefined();
      // The session starts afresh at seq 1.
      expect((await sink.append(result('acme_one', 'again', 'ok'))).seq).toBe(1);
    } finally {
      retention.close();
      await sink.close();
    }
  });
});
