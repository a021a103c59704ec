/**
 * Clients that never read: a live follow reads no further page while its
 * socket is full and is disconnected once it stalls; large bodies go out as
 * the client takes them, and past `maxOutboundMiB` new heavy responses get
 * 503 instead of piling up in the heap.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type Running } from '../services/helpers.ts';

const MiB = 1024 * 1024;
const running: Running[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const r of running.splice(0)) await r.server.close();
});

/** A session log of about `mib` MiB, written directly. */
async function writeLog(dataDir: string, sessionId: string, mib: number): Promise<void> {
  const dir = path.join(dataDir, 'sessions');
  await mkdir(dir, { recursive: true });
  const out = createWriteStream(path.join(dir, `${sessionId}.jsonl`));
  const pad = 'p'.repeat(8 * 1024);
  const lines = Math.ceil((mib * MiB) / pad.length);
  for (let seq = 1; seq <= lines; seq++) {
    const line = { seq, at: '2026-01-01T00:00:00.000Z', type: 'tool/result', sessionId, callId: `c${seq}`, name: 'echo', isError: false, content: [{ type: 'text', text: pad }] };
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** A raw connection that sends `request` and then reads nothing (or only its first chunk, returned). */
async function stalledClient(url: string, request: string, readFirst = false): Promise<{ socket: net.Socket; first: string }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port) });
  sockets.push(socket);
  await once(socket, 'connect');
  let first = '';
  if (readFirst) {
    const data = once(socket, 'data');
    socket.write(request);
    first = ((await data)[0] as Buffer).toString('latin1');
  } else {
    socket.write(request);
  }
  socket.pause();
  return { socket, first };
}

function connections(r: Running): Promise<number> {
  return new Promise((resolve, reject) => r.server.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

/** Garbage collection on demand, to measure what is retained rather than what is not collected yet. */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Samples the retained heap (after a collection) until `until` settles; resolves with its peak growth over the start. */
async function peakRetainedGrowth(until: Promise<unknown>): Promise<number> {
  const retained = () => {
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  const start = retained();
  let peak = start;
  let done = false;
  const settled = until.finally(() => (done = true));
  while (!done) {
    peak = Math.max(peak, retained());
    await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, 200))]).catch(() => undefined);
  }
  await settled;
  return peak - start;
}

describe('clients that do not read', () => {
  it('live followers that never read hold about a page each, and are disconnected once they stall', { timeout: 120_000 }, async () => {
    const r = await startServer({ writeStallMs: 3_000 });
    running.push(r);
    await writeLog(r.config.dataDir, 'huge', 48);
    const request = 'GET /v1/sessions/huge/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n';
    const followers = 12;
    const growth = await peakRetainedGrowth(
      (async () => {
        for (let i = 0; i < followers; i++) await stalledClient(r.url, request);
        // The server drops each follower that took nothing for writeStallMs.
        await expect.poll(() => connections(r), { timeout: 60_000, interval: 50 }).toBe(0);
      })(),
    );
    // Unbounded, each follower's stream held most of the log, so growth scaled with the followers.
    expect(growth).toBeLessThan(160 * MiB);
    // A client that does read gets the whole log.
    const response = await fetch(`${r.url}/v1/sessions/huge/events?after=${0}&limit=1000`);
    expect(response.status).toBe(200);
  });

  it('large bodies wait for their clients; past maxOutboundMiB new runs get 503 and stalled clients are dropped', { timeout: 120_000 }, async () => {
    const r = await startServer({ writeStallMs: 10_000, maxOutboundMiB: 16 });
    running.push(r);
    // A body of about 16 MiB: more than the kernel's socket buffers take, so most of it waits in the server.
    const code = "return 'x'.repeat(15 * 1024 * 1024)";
    const body = JSON.stringify({ code, sessionId: 'big' });
    const request = `POST /v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const answers: string[] = [];
    for (let i = 0; i < 5; i++) answers.push((await stalledClient(r.url, request, true)).first);
    const statuses = answers.map((first) => Number(/^HTTP\/1\.1 (\d{3})/.exec(first)?.[1]));
    // Two unread bodies hold more than 16 MiB: from then on runs are refused before they start.
    expect(statuses[0]).toBe(200);
    expect(statuses.slice(2)).toEqual([503, 503, 503]);
    expect(answers[4]).toContain('"code":"UNDER_PRESSURE"');
    expect(answers[4]).toMatch(/retry-after: 5/i);
    // The stalled clients are dropped, which frees the budget: a client that reads gets its run whole.
    await expect.poll(() => connections(r), { timeout: 60_000, interval: 50 }).toBe(0);
    const response = await fetch(`${r.url}/v1/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { value: { result: string } }).value.result.length).toBe(15 * MiB);
  });
});
