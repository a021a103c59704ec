/**
 * The PostgreSQL journal store on a real server: what one replica pauses another reads and
 * claims, a reconnect of every replica loses nothing, concurrent claims from several replicas
 * have exactly one winner, and a damaged record is refused as corrupt.
 */
import { describe, expect, it } from 'vitest';
import { createPostgresJournalStore } from '../../services/postgres/journal-store.ts';
import { JournalCorruptError, type RunJournal } from '../../src/code-mode/journal-store.ts';
import { useTestDatabase } from './test-database.ts';

const { server, open } = useTestDatabase();

function journal(callId: string, pausedAt: number): RunJournal {
  return {
    version: 1,
    callId,
    sessionId: 's1',
    run: { code: 'const a = await tools.echo({ text: "x" }); return a;', description: 'echo' },
    status: 'paused',
    // Key order and a large exact number survive the round trip.
    entries: [{ seq: 1, toolName: 'echo', args: { z: 1, a: 9007199254740991 }, state: 'applied', value: { text: 'x', n: 0.1 } }],
    reads: [1_700_000_000_000, 0.25],
    pending: [{ seq: 2, toolName: 'send', args: { to: 'b' } }],
    pausedAt,
    expiresAt: pausedAt + 86_400_000,
  };
}

describe('the PostgreSQL journal store', () => {
  it('gives replica B what replica A paused, and lists paused runs by prefix, oldest first', async () => {
    const [a, b] = (await Promise.all([open(), open()])).map(createPostgresJournalStore);
    await a.put(journal('t1/run-2', 2_000));
    await a.put(journal('t1/run-1', 1_000));
    await a.put(journal('t2/run-3', 500));
    const read = await b.get('t1/run-1');
    expect(read).toEqual(journal('t1/run-1', 1_000));
    expect(Object.keys(read!.entries[0].args as object)).toEqual(['z', 'a']);
    expect((await b.listPaused('t1/')).map((j) => j.callId)).toEqual(['t1/run-1', 't1/run-2']);
    expect((await b.listPaused('')).map((j) => j.callId)).toEqual(['t2/run-3', 't1/run-1', 't1/run-2']);
    expect(await b.get('t1/unknown')).toBeUndefined();
  });

  it('lets exactly one of many concurrent claims from several replicas win', async () => {
    const stores = (await Promise.all([open(), open(), open()])).map(createPostgresJournalStore);
    await stores[0].put(journal('race', 10));
    const claims = await Promise.all(stores.flatMap((store) => Array.from({ length: 8 }, () => store.claim('race', 'paused', 'resuming'))));
    const winners = claims.filter((c) => c !== undefined);
    expect(winners).toHaveLength(1);
    expect(winners[0]).toMatchObject({ callId: 'race', status: 'paused' });
    expect((await stores[2].get('race'))?.status).toBe('resuming');
    expect((await stores[1].listPaused('')).map((j) => j.callId)).not.toContain('race');
    expect(await stores[1].claim('race', 'paused', 'resuming')).toBeUndefined();
    expect(await stores[1].claim('nothing-here', 'paused', 'resuming')).toBeUndefined();
  });

  it('keeps paused runs across a restart of the database and of every replica', async () => {
    const first = await open();
    await createPostgresJournalStore(first).put(journal('survives', 20));
    await first.close();
    await server().stop();
    await server().start();
    const again = createPostgresJournalStore(await open());
    expect(await again.get('survives')).toEqual(journal('survives', 20));
    const put = { ...journal('survives', 20), status: 'finished' as const, pending: [] };
    await again.put(put);
    expect(await again.get('survives')).toEqual(put);
  });

  it('removes records over before the cutoff: expired paused, ended finished and rolled back, never resuming', async () => {
    const store = createPostgresJournalStore(await open());
    const day = 86_400_000;
    await store.put(journal('sweep/expired', 100)); // expires at 100 + a day
    await store.put(journal('sweep/waiting', 5 * day));
    await store.put({ ...journal('sweep/finished', 100), status: 'finished', pending: [], endedAt: 200 });
    await store.put({ ...journal('sweep/rolled-back', 100), status: 'rolled-back', pending: [], endedAt: 3 * day });
    await store.put(journal('sweep/resuming', 100));
    await store.claim('sweep/resuming', 'paused', 'resuming');
    // Other tests' records share the table: at least these two go.
    expect(await store.removeOverBefore!(2 * day)).toBeGreaterThanOrEqual(2);
    for (const gone of ['sweep/expired', 'sweep/finished']) expect(await store.get(gone)).toBeUndefined();
    for (const kept of ['sweep/waiting', 'sweep/rolled-back', 'sweep/resuming']) expect(await store.get(kept)).toBeDefined();
  });

  it('refuses a damaged record as corrupt, for get and list alike', async () => {
    const db = await open();
    const store = createPostgresJournalStore(db);
    await store.put(journal('damaged', 30));
    await db.query("UPDATE ptc_journals SET record = left(record, 40) WHERE call_id = 'damaged'");
    await expect(store.get('damaged')).rejects.toBeInstanceOf(JournalCorruptError);
    await expect(store.listPaused('dam')).rejects.toMatchObject({ code: 'JOURNAL_CORRUPT' });
    await db.query(`UPDATE ptc_journals SET record = $1 WHERE call_id = 'damaged'`, [JSON.stringify({ ...journal('damaged', 30), version: 2 })]);
    await expect(store.get('damaged')).rejects.toThrow(/version 2 is not 1/);
  });
});
