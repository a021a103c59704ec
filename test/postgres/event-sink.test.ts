import { describe, expect, it } from 'vitest';
import { createPostgresEventSink } from '../../services/postgres/event-sink.ts';
import { toolResultEvent, useTestDatabase } from './test-database.ts';
import { existsSync } from 'node:fs';
import { createToolRegistry } from '../../src/registry.ts';
import { createSpillWriter, readSpill } from '../../services/postgres/spill-store.ts';
import { echoTool, textOf } from '../src/tool-fixtures.ts';

const { open } = useTestDatabase();
const result = toolResultEvent;

describe('the PostgreSQL event sink', () => {
  it('migrates idempotently when several replicas start at once', async () => {
    const dbs = await Promise.all([open(), open(), open()]);
    const { rows } = await dbs[0].query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE tablename LIKE 'ptc_%'");
    expect(Number(rows[0].n)).toBe(6);
  });

  it('gives one gap-free seq per session across sinks appending at once, in each sink’s call order', async () => {
    const sinks = await Promise.all([open(), open(), open()]).then((dbs) => dbs.map(createPostgresEventSink));
    const appended = await Promise.all(
      sinks.flatMap((sink, replica) => Array.from({ length: 40 }, (_, i) => sink.append(result('shared', `r${replica}-${i}`)))),
    );
    await Promise.all(sinks.map((sink) => sink.flush('shared')));
    const seqs = appended.map((e) => e.seq).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    // Within one sink, seqs follow call order.
    for (let replica = 0; replica < 3; replica++) {
      const mine = appended.filter((e) => e.type === 'tool/result' && e.callId.startsWith(`r${replica}-`)).map((e) => e.seq);
      expect(mine).toEqual([...mine].sort((a, b) => a - b));
    }
    const all = [];
    for (let after: number | undefined = 0; after !== undefined; ) {
      const page = await sinks[1].readPage('shared', { after, limit: 50 });
      all.push(...page.events);
      after = page.next;
    }
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    expect(all[0]).toMatchObject({ type: 'tool/result', sessionId: 'shared', isError: false, content: [{ type: 'text', text: 'ok' }] });
    expect(typeof all[0].at).toBe('string');
  });

  it('keeps text jsonb would refuse, and pages by bytes', async () => {
    const sink = createPostgresEventSink(await open());
    await sink.append(result('odd', 'a', 'nul \u0000 and emoji 🎉'));
    await sink.append(result('odd', 'b', 'x'.repeat(1000)));
    const page = await sink.readPage('odd', { after: 0, maxBytes: 10 });
    expect(page.events).toHaveLength(1);
    expect(page.next).toBe(1);
    expect((page.events[0] as { content: { text: string }[] }).content[0].text).toBe('nul \u0000 and emoji 🎉');
    expect((await sink.readPage('odd', { after: 1 })).events.map((e) => e.seq)).toEqual([2]);
  });

  it('refuses session ids that the JSONL sink refuses', async () => {
    const sink = createPostgresEventSink(await open());
    await expect(sink.readPage('../etc')).rejects.toThrow(RangeError);
  });

  it('wakes followers on other connections when an event commits', async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const writer = createPostgresEventSink(a);
    const reader = createPostgresEventSink(b);
    const woke = new Promise<void>((resolve) => reader.follow('followed', resolve));
    await writer.append(result('followed', 'c1'));
    await woke;
    expect((await reader.readPage('followed')).events).toHaveLength(1);
  });
});

describe('spill blobs in PostgreSQL', () => {
  it('stores an over-cap result whole in ptc_spill, names it in the preview, and writes no file', async () => {
    const db = await open();
    const dir = '/nonexistent-ptc-spill-dir';
    const registry = createToolRegistry({ spill: { dir, shownAs: 'ptc_spill', maxInlineBytes: 600, write: createSpillWriter(db) } });
    registry.register(echoTool());
    const text = `HEAD-${'x'.repeat(5000)}-TAIL`;
    const result = await registry.dispatch({ name: 'echo', arguments: { text }, sessionId: 'spilled', callId: 'big' });
    const preview = textOf(result);
    expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(600);
    expect(preview).toContain('ptc_spill/spilled/big.txt');
    expect((await readSpill(db, 'spilled', 'big'))?.toString('utf8')).toBe(text);
    expect(existsSync(dir)).toBe(false);
  });
});
