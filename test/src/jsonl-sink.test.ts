import { appendFile, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createJsonlEventSink, type JsonlEventSink } from '../../src/event-sinks/jsonl-sink.ts';
import type { NewToolEvent } from '../../src/events.ts';
import { createToolRegistry } from '../../src/registry.ts';
import { echoTool } from './tool-fixtures.ts';

function resultEvent(sessionId: string, callId: string): NewToolEvent {
  return { type: 'tool/result', sessionId, callId, name: 'echo', isError: false, content: [{ type: 'text', text: callId }] };
}

describe('JSONL event sink', () => {
  let dir: string;
  const sinks: JsonlEventSink[] = [];
  const sinkAt = (): JsonlEventSink => {
    const sink = createJsonlEventSink({ dir });
    sinks.push(sink);
    return sink;
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptc-jsonl-'));
  });
  afterEach(async () => {
    for (const sink of sinks.splice(0)) await sink.close().catch(() => undefined);
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes one file per session, one stamped event per line, only on flush', async () => {
    const sink = sinkAt();
    await sink.append(resultEvent('s1', 'a'));
    await sink.append(resultEvent('s2', 'b'));
    await sink.append(resultEvent('s1', 'c'));
    expect((await sink.read('s1')).length).toBe(0);
    await sink.flush('s1');
    await sink.flush('s2');
    expect((await readdir(dir)).sort()).toEqual(['s1.jsonl', 's2.jsonl']);
    const lines = (await readFile(join(dir, 's1.jsonl'), 'utf8')).split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(0, -1).map((line) => JSON.parse(line).callId)).toEqual(['a', 'c']);
    const events = await sink.read('s1');
    expect(events.map((e) => [e.seq, (e as { callId: string }).callId])).toEqual([
      [1, 'a'],
      [2, 'c'],
    ]);
    expect(events[0].at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await sink.read('s1', { after: 1 })).map((e) => e.seq)).toEqual([2]);
    expect(await sink.read('never')).toEqual([]);
  });

  it('continues seq after a reopen', async () => {
    const first = sinkAt();
    await first.append(resultEvent('s', 'a'));
    await first.append(resultEvent('s', 'b'));
    await first.close();
    const second = sinkAt();
    const stamped = await second.append(resultEvent('s', 'c'));
    expect(stamped.seq).toBe(3);
    await second.flush('s');
    expect((await second.read('s')).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('survives a torn last line: read ignores it, reopen cuts it and continues seq', async () => {
    const first = sinkAt();
    await first.append(resultEvent('s', 'a'));
    await first.append(resultEvent('s', 'b'));
    await first.close();
    const file = join(dir, 's.jsonl');
    await appendFile(file, '{"type":"tool/result","sessionId":"s","seq":3,"callId":"tor');
    const reader = sinkAt();
    expect((await reader.read('s')).map((e) => e.seq)).toEqual([1, 2]);
    const second = sinkAt();
    expect((await second.append(resultEvent('s', 'c'))).seq).toBe(3);
    await second.flush('s');
    const text = await readFile(file, 'utf8');
    const parsed = text.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(parsed.map((e) => [e.seq, e.callId])).toEqual([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ]);
  });

  it('refuses a session id that could escape the folder, and writes nothing outside it', async () => {
    const sink = sinkAt();
    for (const bad of ['../evil', 'a/b', '', '.', 'x'.repeat(129), 'a b']) {
      expect(() => sink.append(resultEvent(bad, 'x'))).toThrow(/session id/);
    }
    await expect(sink.read('../evil')).rejects.toThrow(/session id/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('commits concurrent flushes as one group with one fsync', async () => {
    const sink = sinkAt();
    await sink.append(resultEvent('g', 'warm'));
    await sink.flush('g');
    const probe = await open(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { datasync(): Promise<void> };
    await probe.close();
    const datasync = vi.spyOn(proto, 'datasync');
    for (let i = 0; i < 10; i++) await sink.append(resultEvent('g', `e${i}`));
    await Promise.all(Array.from({ length: 10 }, () => sink.flush('g')));
    expect(datasync).toHaveBeenCalledTimes(1);
    expect((await sink.read('g')).length).toBe(11);

    // Flushes arriving while a round is in flight share the next round, and
    // each resolves only after the fsync covering its own event.
    datasync.mockRestore();
    const original = proto.datasync;
    let synced = 0;
    const counted = vi.spyOn(proto, 'datasync').mockImplementation(async function (this: unknown) {
      await original.call(this);
      synced++;
    });
    const syncedAtResolve: Promise<number>[] = [];
    for (let i = 0; i < 10; i++) {
      await sink.append(resultEvent('g', `late${i}`));
      syncedAtResolve.push(sink.flush('g').then(() => synced));
    }
    expect(await Promise.all(syncedAtResolve)).toEqual([1, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
    expect(counted).toHaveBeenCalledTimes(2);
    expect((await sink.read('g')).map((e) => e.seq)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
  });

  it('keeps order when appends race with a flush that is in flight', async () => {
    const sink = sinkAt();
    const flushes: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      const stamped = sink.append(resultEvent('o', `e${i}`));
      if (i % 3 === 0) flushes.push(Promise.resolve(stamped).then(() => sink.flush('o')));
    }
    await Promise.all(flushes);
    await sink.flush('o');
    const events = await sink.read('o');
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(events.map((e) => (e as { callId: string }).callId)).toEqual(Array.from({ length: 20 }, (_, i) => `e${i}`));
  });

  it('refuses appends after close', async () => {
    const sink = sinkAt();
    await sink.close();
    expect(() => sink.append(resultEvent('s', 'late'))).toThrow(/closed/);
  });

  it('refuses to cut a file that is not an event log', async () => {
    await writeFile(join(dir, 'foreign.jsonl'), 'not json\nat all\n');
    const sink = sinkAt();
    await expect(Promise.resolve().then(() => sink.append(resultEvent('foreign', 'x')))).rejects.toThrow(/not an event log/);
    expect(await readFile(join(dir, 'foreign.jsonl'), 'utf8')).toBe('not json\nat all\n');
  });

  it('has the event on disk by the time an outer dispatch returns', async () => {
    const sink = sinkAt();
    const registry = createToolRegistry({ eventSink: sink });
    registry.register(echoTool());
    await registry.dispatch({ name: 'echo', arguments: { text: 'durable' }, sessionId: 'reg', callId: 'c1' });
    const onDisk = (await readFile(join(dir, 'reg.jsonl'), 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(onDisk).toMatchObject([{ type: 'tool/result', seq: 1, callId: 'c1', content: [{ type: 'text', text: 'durable' }] }]);
    expect(onDisk[0]).not.toHaveProperty('value');
  });
});
