/**
 * Faults against a real `ptc serve` child process: SIGTERM under load
 * (every in-flight call finishes rather than being cancelled when the grace
 * period ends, its events on disk, exit 0)
 * and SIGKILL mid-run (after a restart the session logs read back, a torn
 * tail is tolerated, and no completed call is missing).
 */
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSse } from '../services/helpers.ts';
import { eventKey, readSessionFiles, serverDirs, startCliServer } from './cli-server.ts';

interface Completed {
  callId: string;
  isError: boolean;
  events: { sessionId: string; seq: number; type: string }[];
}

const NESTED = "const files = await tools.glob({ pattern: '*' });\nawait new Promise((r) => setTimeout(r, 20));\nconst hits = await tools.grep({ pattern: 'x' });\nreturn files;";

async function postRun(url: string, body: object, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/v1/run`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

async function expectAllOnDisk(data: string, completed: Omit<Completed, 'isError'>[]): Promise<number> {
  const { events } = await readSessionFiles(data);
  const onDisk = new Set(events.map(eventKey));
  let checked = 0;
  for (const call of completed) {
    expect(call.events.some((e) => e.type === 'tool/result')).toBe(true);
    for (const event of call.events) {
      expect(onDisk.has(eventKey(event)), `${call.callId}: ${eventKey(event)}`).toBe(true);
      checked++;
    }
  }
  return checked;
}

describe('faults', () => {
  it('SIGTERM under load: in-flight calls finish uncancelled, every completed call is on disk, the server exits 0', { timeout: 60_000 }, async () => {
    const graceMs = 10_000;
    const dirs = await serverDirs({ shutdownGraceMs: graceMs });
    const server = await startCliServer(dirs, ['--runtime', 'in-process']);
    const completed: Completed[] = [];
    const statuses = new Map<number | string, number>();
    let terminated = false;
    let sent = 0;
    let signalled!: () => void;
    const enough = new Promise<void>((resolve) => (signalled = resolve));

    const client = async (id: number): Promise<void> => {
      for (let i = 0; ; i++) {
        const callId = `term-${id}-${i}`;
        let response: Response;
        try {
          sent++;
          response = await postRun(server.url, { code: i % 2 === 0 ? NESTED : 'return 1', sessionId: `term-${id % 4}`, callId });
        } catch {
          statuses.set('network', (statuses.get('network') ?? 0) + 1);
          return; // the server stopped listening
        }
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status !== 200) {
          await response.body?.cancel();
          if (terminated) return;
          continue;
        }
        const body = (await response.json()) as Omit<Completed, 'callId'>;
        completed.push({ callId, isError: body.isError, events: body.events });
        if (completed.length >= 40) signalled();
      }
    };
    const clients = Array.from({ length: 16 }, (_, id) => client(id));
    await enough;
    terminated = true;
    server.child.kill('SIGTERM');
    await Promise.all(clients);
    expect(await server.exited).toBe(0);
    // Runs still in flight when the grace period ends are cancelled, and answer with an error.
    expect(completed.filter((call) => call.isError)).toEqual([]);

    for (const status of statuses.keys()) expect([200, 503, 'network']).toContain(status);
    expect(sent).toBeGreaterThan(completed.length);
    const checked = await expectAllOnDisk(dirs.data, completed);
    expect(checked).toBeGreaterThanOrEqual(completed.length * 2);
  });

  it('SIGKILL mid-run: after a restart the logs read back (torn tail tolerated) and no completed call is missing', { timeout: 60_000 }, async () => {
    const dirs = await serverDirs();
    const first = await startCliServer(dirs, ['--runtime', 'in-process']);
    const completed: Completed[] = [];
    for (let i = 0; i < 6; i++) {
      const callId = `done-${i}`;
      const response = await postRun(first.url, { code: NESTED, sessionId: i % 2 === 0 ? 'kill-a' : 'kill-b', callId });
      expect(response.status).toBe(200);
      completed.push({ callId, ...((await response.json()) as Omit<Completed, 'callId'>) });
    }

    // Runs in flight: each has made a nested call and is waiting when the process dies.
    const inFlight = ['kill-a', 'kill-b', 'kill-c'].map(async (sessionId, i) => {
      const response = await postRun(
        first.url,
        { code: "await tools.glob({ pattern: '*' });\nconsole.log('waiting');\nawait new Promise((r) => setTimeout(r, 60_000));", sessionId, callId: `flight-${i}` },
        { accept: 'text/event-stream' },
      );
      let logged!: () => void;
      const waiting = new Promise<void>((resolve) => (logged = resolve));
      const stream = readSse(response, (event) => {
        if (event.event === 'log') logged();
      }).catch(() => undefined);
      return { waiting, stream };
    });
    const flights = await Promise.all(inFlight);
    await Promise.all(flights.map((f) => f.waiting));
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await Promise.all(flights.map((f) => f.stream));

    // A crash in the middle of a write leaves an unterminated last line.
    await appendFile(path.join(dirs.data, 'sessions', 'kill-a.jsonl'), '{"type":"tool/result","sessionId":"kill-a","se');
    expect((await readSessionFiles(dirs.data)).torn).toBe(1);
    await expectAllOnDisk(dirs.data, completed);

    const second = await startCliServer(dirs, ['--runtime', 'in-process']);
    try {
      for (const sessionId of ['kill-a', 'kill-b']) {
        const read = await fetch(`${second.url}/v1/sessions/${sessionId}/events`);
        expect(read.status).toBe(200);
        const { events } = (await read.json()) as { events: Completed['events'] };
        const served = new Set(events.map(eventKey));
        for (const call of completed) for (const event of call.events) if (event.sessionId === sessionId) expect(served.has(eventKey(event))).toBe(true);
      }
      // The session keeps going after the torn tail: new events follow the last durable seq.
      const before = (await readSessionFiles(dirs.data)).events.filter((e) => e.sessionId === 'kill-a');
      const maxSeq = Math.max(...before.map((e) => e.seq));
      const next = await postRun(second.url, { code: 'return 2', sessionId: 'kill-a', callId: 'after-restart' });
      expect(next.status).toBe(200);
      const nextEvents = ((await next.json()) as { events: Completed['events'] }).events;
      expect(nextEvents.every((e) => e.seq > maxSeq)).toBe(true);
      const after = await readSessionFiles(dirs.data);
      expect(after.torn).toBe(0);
      await expectAllOnDisk(dirs.data, [...completed, { callId: 'after-restart', events: nextEvents }]);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
  });
});
