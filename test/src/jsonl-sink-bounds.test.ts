import { readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJsonlEventSink, EventLogError, type JsonlEventSink, type JsonlEventSinkOptions } from '../../src/event-sinks/jsonl-sink.ts';
import { nodeSinkFs, type SinkFileHandle, type SinkFs } from '../../src/event-sinks/sink-fs.ts';
import type { NewToolEvent, SessionLogEvent } from '../../src/events.ts';

function resultEvent(sessionId: string, callId: string, text: string = callId): NewToolEvent {
  return { type: 'tool/result', sessionId, callId, name: 'echo', isError: false, content: [{ type: 'text', text }] };
}

const callIds = (events: readonly SessionLogEvent[]) => events.map((e) => ('callId' in e ? e.callId : e.type));
const openFds = () => readdirSync('/proc/self/fd').length;

/** node's fs, counting the handles it has open and letting a test inject faults. */
function faultyFs() {
  const state = {
    open: 0,
    maxOpen: 0,
    bytesRead: 0,
    /** Thrown by open (for writing) while set. */
    openError: undefined as string | undefined,
    /** A write fails with ENOSPC after this many more bytes while set. */
    spaceLeft: undefined as number | undefined,
    truncateError: undefined as string | undefined,
  };
  const fail = (code: string) => Object.assign(new Error(`${code}: injected`), { code });
  const fs: SinkFs = {
    async open(path, flags) {
      if (state.openError !== undefined && flags !== 'r') throw fail(state.openError);
      const fh = await nodeSinkFs.open(path, flags);
      state.open++;
      state.maxOpen = Math.max(state.maxOpen, state.open);
      const wrapped: SinkFileHandle = {
        async write(buffer, offset, length) {
          if (state.spaceLeft !== undefined) {
            if (state.spaceLeft === 0) throw fail('ENOSPC');
            const n = Math.min(length, state.spaceLeft);
            state.spaceLeft -= n;
            return fh.write(buffer, offset, n);
          }
          return fh.write(buffer, offset, length);
        },
        async read(buffer, offset, length, position) {
          const r = await fh.read(buffer, offset, length, position);
          state.bytesRead += r.bytesRead;
          return r;
        },
        stat: () => fh.stat(),
        async truncate(length) {
          if (state.truncateError !== undefined) throw fail(state.truncateError);
          return fh.truncate(length);
        },
        datasync: () => fh.datasync(),
        sync: () => fh.sync(),
        async close() {
          state.open--;
          return fh.close();
        },
      };
      return wrapped;
    },
    async mkdir(path) {
      if (state.openError !== undefined) throw fail(state.openError);
      return nodeSinkFs.mkdir(path);
    },
    unlink: (path) => nodeSinkFs.unlink(path),
  };
  return { fs, state };
}

describe('JSONL sink: bounds and faults', () => {
  let dir: string;
  const sinks: JsonlEventSink[] = [];
  const sinkAt = (options: Omit<JsonlEventSinkOptions, 'dir'> = {}): JsonlEventSink => {
    const sink = createJsonlEventSink({ dir, ...options });
    sinks.push(sink);
    return sink;
  };
  const linesOf = async (sessionId: string) => {
    const text = await readFile(join(dir, `${sessionId}.jsonl`), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    return text.trimEnd().split('\n').map((line) => JSON.parse(line) as SessionLogEvent);
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptc-jsonl-bounds-'));
  });
  afterEach(async () => {
    for (const sink of sinks.splice(0)) await sink.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a backlog in rounds of bounded bytes, in order', async () => {
    const { fs, state } = faultyFs();
    const writes: number[] = [];
    const counting: SinkFs = {
      ...fs,
      async open(path, flags) {
        const fh = await fs.open(path, flags);
        return { ...fh, write: (b, o, l) => (writes.push(l), fh.write(b, o, l)) } as SinkFileHandle;
      },
    };
    const sink = sinkAt({ fs: counting, maxRoundBytes: 4096 });
    for (let i = 0; i < 200; i++) await sink.append(resultEvent('big', `e${i}`, 'x'.repeat(300)));
    await sink.flush('big');
    expect(writes.length).toBeGreaterThan(10);
    expect(Math.max(...writes)).toBeLessThanOrEqual(4096);
    expect(callIds(await linesOf('big'))).toEqual(Array.from({ length: 200 }, (_, i) => `e${i}`));
    expect(state.open).toBeLessThanOrEqual(1);
  });

  it('keeps at most maxOpenFiles session files open across 2,000 sessions; nothing lost or reordered across close and reopen', async () => {
    const { fs, state } = faultyFs();
    const sink = sinkAt({ fs, maxOpenFiles: 8 });
    const baseline = openFds();
    let maxFds = 0;
    const ids = Array.from({ length: 2_000 }, (_, i) => `s${i}`);
    for (let round = 0; round < 2; round++) {
      // The second round reopens every fifth session (its file was closed long ago).
      const these = round === 0 ? ids : ids.filter((_, i) => i % 5 === 0);
      for (let batch = 0; batch < these.length; batch += 100) {
        await Promise.all(
          these.slice(batch, batch + 100).map(async (id) => {
            await sink.append(resultEvent(id, `${id}-r${round}-a`));
            await sink.append(resultEvent(id, `${id}-r${round}-b`));
            await sink.flush(id);
          }),
        );
        maxFds = Math.max(maxFds, openFds() - baseline);
      }
    }
    // The bound, plus the one directory handle that makes new files durable.
    expect(state.maxOpen).toBeLessThanOrEqual(9);
    expect(maxFds).toBeLessThanOrEqual(9);
    for (const id of [ids[0], ids[775], ids[1995]]) {
      const events = await sink.read(id);
      expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect(callIds(events)).toEqual([`${id}-r0-a`, `${id}-r0-b`, `${id}-r1-a`, `${id}-r1-b`]);
    }
    expect(callIds(await sink.read(ids[1999]))).toEqual([`${ids[1999]}-r0-a`, `${ids[1999]}-r0-b`]);
    expect(readdirSync(dir).length).toBe(2_000);
  });

  it('pages every event exactly once, with a next cursor absent at the end', async () => {
    const sink = sinkAt();
    for (let i = 0; i < 250; i++) await sink.append(resultEvent('p', `e${i}`));
    await sink.flush('p');
    const seen: number[] = [];
    let after = 0;
    let pages = 0;
    for (;;) {
      const page = await sink.readPage('p', { after, limit: 100 });
      pages++;
      seen.push(...page.events.map((e) => e.seq));
      if (page.next === undefined) break;
      expect(page.next).toBe(page.events.at(-1)!.seq);
      after = page.next;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
    expect(await sink.readPage('p', { after: 999_999 })).toEqual({ events: [] });
    expect(await sink.readPage('p', { after: 200, limit: 100 })).toMatchObject({ events: { length: 50 } });
    expect((await sink.readPage('p', { after: 200, limit: 100 })).next).toBeUndefined();
    // The byte bound stops a page early but always serves one event.
    expect((await sink.readPage('p', { limit: 100, maxBytes: 1 })).events.length).toBe(1);
  });

  it('finds a large `after` by bisection: reads a small part of a large log', async () => {
    const { fs, state } = faultyFs();
    const sink = sinkAt({ fs });
    for (let i = 0; i < 4_000; i++) sink.append(resultEvent('l', `e${i}`, 'y'.repeat(1_000)));
    await sink.flush('l');
    const size = (await readFile(join(dir, 'l.jsonl'))).length;
    state.bytesRead = 0;
    expect(await sink.readPage('l', { after: 999_999 })).toEqual({ events: [] });
    expect(state.bytesRead).toBeLessThan(size / 4);
    state.bytesRead = 0;
    const page = await sink.readPage('l', { after: 3_500, limit: 10 });
    expect(page.events.map((e) => e.seq)).toEqual(Array.from({ length: 10 }, (_, i) => 3_501 + i));
    expect(page.next).toBe(3_510);
    expect(state.bytesRead).toBeLessThan(size / 4);
  });

  it('serves a corrupt log up to the damage and reports its position; a truncated log up to its last whole line', async () => {
    const sink = sinkAt();
    for (let i = 0; i < 5; i++) sink.append(resultEvent('c', `e${i}`));
    await sink.flush('c');
    const file = join(dir, 'c.jsonl');
    const lines = (await readFile(file, 'utf8')).split('\n');
    const offset = Buffer.byteLength(lines.slice(0, 2).join('\n')) + 1;
    lines[2] = '{"seq":3,"at":"x","type":"tool/res#### garbage';
    await writeFile(file, lines.join('\n'));
    const page = await sink.readPage('c');
    expect(page.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(page.next).toBeUndefined();
    expect(page.damage).toMatchObject({ offset, afterSeq: 2 });
    expect(page.damage!.message).toMatch(new RegExp(`byte ${offset}`));
    await expect(sink.read('c')).rejects.toThrow(/corrupt/);

    // Truncated in the middle of a line: the torn piece is not an event, and no damage.
    const whole = await readFile(file);
    await writeFile(file, whole.subarray(0, offset + 10));
    expect(await sink.readPage('c')).toEqual({ events: expect.any(Array) });
    expect((await sink.readPage('c')).events.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('ENOSPC mid-append: no torn line, a log/gap in place of the lost events, unhealthy until a write succeeds, then keeps persisting', async () => {
    const { fs, state } = faultyFs();
    const sink = sinkAt({ fs });
    await sink.append(resultEvent('f', 'ok1'));
    await sink.flush('f');
    expect(await sink.health()).toEqual({ ok: true });

    state.spaceLeft = 30; // the next write stops part-way through a line
    sink.append(resultEvent('f', 'lost2'));
    sink.append(resultEvent('f', 'lost3'));
    const failed = sink.flush('f');
    await expect(failed).rejects.toBeInstanceOf(EventLogError);
    await expect(failed).rejects.toMatchObject({ code: 'EVENT_LOG_FAILED', reason: 'ENOSPC' });
    const afterFault = await linesOf('f');
    expect(callIds(afterFault)).toEqual(['ok1']);
    expect(await sink.health()).toMatchObject({ ok: false, code: 'ENOSPC' });

    // Still full: the next round fails too, and the gap grows to cover it.
    state.spaceLeft = 0;
    sink.append(resultEvent('f', 'lost4'));
    await expect(sink.flush('f')).rejects.toMatchObject({ reason: 'ENOSPC' });
    expect(callIds(await linesOf('f'))).toEqual(['ok1']);

    state.spaceLeft = undefined;
    sink.append(resultEvent('f', 'ok5'));
    await sink.flush('f');
    const events = await linesOf('f');
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, 'tool/result'],
      [4, 'log/gap'],
      [5, 'tool/result'],
    ]);
    expect(events[1]).toMatchObject({ type: 'log/gap', sessionId: 'f', fromSeq: 2, toSeq: 4, code: 'ENOSPC' });
    expect(await sink.health()).toEqual({ ok: true });
    expect((await sink.readPage('f', { after: 1 })).events.map((e) => e.seq)).toEqual([4, 5]);
  });

  it('a full disk: a failed flush drops every line it waited for, so nothing piles up behind it', async () => {
    const { fs, state } = faultyFs();
    const sink = sinkAt({ fs, maxRoundBytes: 4096 });
    await sink.append(resultEvent('d', 'ok1'));
    await sink.flush('d');
    state.spaceLeft = 0;
    // Ten runs' worth of events that each take several rounds: every flush fails, none leaves lines behind.
    for (let run = 0; run < 10; run++) {
      for (let i = 0; i < 8; i++) sink.append(resultEvent('d', `lost-${run}-${i}`, 'x'.repeat(2048)));
      await expect(sink.flush('d')).rejects.toMatchObject({ reason: 'ENOSPC' });
    }
    expect(sink.writeState()).toMatchObject({ ok: false, code: 'ENOSPC' });
    state.spaceLeft = undefined;
    sink.append(resultEvent('d', 'ok2'));
    await sink.flush('d');
    const events = await linesOf('d');
    // One gap for the 80 lost lines, then the next good event: no lost line is written late.
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, 'tool/result'],
      [81, 'log/gap'],
      [82, 'tool/result'],
    ]);
    expect(events[1]).toMatchObject({ fromSeq: 2, toSeq: 81 });
    expect(sink.writeState()).toEqual({ ok: true });
  });

  it('caps the unwritten backlog: past maxBacklogBytes append throws BACKLOG_FULL, and takes events again once written', async () => {
    const sink = sinkAt({ maxBacklogBytes: 64 * 1024 });
    await sink.append(resultEvent('b', 'first'));
    let appended = 0;
    let refused: unknown;
    for (let i = 0; i < 100 && refused === undefined; i++) {
      try {
        sink.append(resultEvent('b', `c${i}`, 'y'.repeat(4096)));
        appended++;
      } catch (error) {
        refused = error;
      }
    }
    expect(refused).toBeInstanceOf(EventLogError);
    expect(refused).toMatchObject({ code: 'EVENT_LOG_FAILED', reason: 'BACKLOG_FULL', message: expect.stringMatching(/65536-byte cap/) });
    expect(appended).toBeGreaterThan(10);
    expect(appended).toBeLessThan(16);
    await sink.flush('b');
    sink.append(resultEvent('b', 'after', 'y'.repeat(4096)));
    await sink.flush('b');
    const ids = callIds(await linesOf('b'));
    expect(ids).toHaveLength(appended + 2);
    expect(ids.at(-1)).toBe('after');
  });

  it('readiness needs a write as large as the one that failed: a tiny probe that fits is not recovery', async () => {
    const { fs, state } = faultyFs();
    const sink = sinkAt({ fs });
    state.spaceLeft = 0;
    sink.append(resultEvent('p', 'big', 'z'.repeat(8192)));
    await expect(sink.flush('p')).rejects.toMatchObject({ reason: 'ENOSPC' });
    // A few bytes are free: enough for a small probe, not for the round that failed.
    state.spaceLeft = 1024;
    expect(await sink.health()).toMatchObject({ ok: false, code: 'ENOSPC' });
    expect(sink.writeState()).toMatchObject({ ok: false });
    state.spaceLeft = undefined;
    sink.append(resultEvent('p', 'ok'));
    await sink.flush('p');
    expect(await sink.health()).toEqual({ ok: true });
  });

  it('a failed write whose cut-back also fails: the file is closed and the reopen cuts the torn tail', async () => {
    const { fs, state } = faultyFs();
    const sink = sinkAt({ fs });
    await sink.append(resultEvent('t', 'ok1'));
    await sink.flush('t');
    state.spaceLeft = 20;
    state.truncateError = 'EIO';
    sink.append(resultEvent('t', 'lost2'));
    await expect(sink.flush('t')).rejects.toMatchObject({ reason: 'ENOSPC' });
    expect((await readFile(join(dir, 't.jsonl'), 'utf8')).endsWith('\n')).toBe(false);
    state.spaceLeft = undefined;
    state.truncateError = undefined;
    sink.append(resultEvent('t', 'ok3'));
    await sink.flush('t');
    expect((await linesOf('t')).map((e) => [e.seq, e.type])).toEqual([
      [1, 'tool/result'],
      [2, 'log/gap'],
      [3, 'tool/result'],
    ]);
  });

  it('read-only data folder: a clear error, unhealthy while it lasts, recovery when it clears', async () => {
    const { fs, state } = faultyFs();
    const sink = sinkAt({ fs, maxOpenFiles: 1 });
    await sink.append(resultEvent('known', 'k1'));
    await sink.flush('known');
    state.openError = 'EROFS';
    // A new session cannot open its file: the append itself fails.
    await expect(Promise.resolve().then(() => sink.append(resultEvent('new', 'n1')))).rejects.toMatchObject({ code: 'EVENT_LOG_FAILED', reason: 'EROFS' });
    // A known session whose file was closed (the slot went to another) stamps, and its flush fails.
    const health = await sink.health();
    expect(health).toMatchObject({ ok: false, code: 'EROFS' });
    expect(await sink.health()).toMatchObject({ ok: false });

    state.openError = undefined;
    // Recovery is seen by the probe once it may run again, or by the next good write.
    await sink.append(resultEvent('new', 'n2'));
    await sink.flush('new');
    expect(await sink.health()).toEqual({ ok: true });
    await sink.append(resultEvent('known', 'k2'));
    await sink.flush('known');
    expect(callIds(await linesOf('known'))).toEqual(['k1', 'k2']);
    expect(callIds(await linesOf('new'))).toEqual(['n2']);
  });
});

describe('reading logs written before seq came first', () => {
  it('pages them the same way', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ptc-jsonl-legacy-'));
    try {
      const lines = Array.from({ length: 30 }, (_, i) => JSON.stringify({ ...resultEvent('old', `e${i}`), seq: i + 1, at: '2026-01-01T00:00:00.000Z' }));
      await writeFile(join(dir, 'old.jsonl'), `${lines.join('\n')}\n`);
      const sink = createJsonlEventSink({ dir });
      expect((await sink.readPage('old', { after: 25 })).events.map((e) => e.seq)).toEqual([26, 27, 28, 29, 30]);
      expect(await sink.readPage('old', { after: 999_999 })).toEqual({ events: [] });
      expect((await sink.append(resultEvent('old', 'new'))).seq).toBe(31);
      await sink.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
