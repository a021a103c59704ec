/**
 * Session logs against a real `ptc serve` child process: what a program can
 * put into the log and the response stays under the documented caps, a large
 * log is read a page at a time without holding /healthz, and a data folder
 * that cannot be written makes /readyz fail until a write succeeds again.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serverDirs, startCliServer, type CliServer, type ServerDirs } from './cli-server.ts';

const MiB = 1024 * 1024;
const servers: CliServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
});

async function postRun(url: string, body: object): Promise<{ status: number; text: string; json: Record<string, unknown> }> {
  const response = await fetch(`${url}/v1/run?events=full`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

async function start(config: object = {}) {
  const dirs = await serverDirs(config);
  await mkdir(dirs.workspace, { recursive: true });
  return { dirs, start: async (extra: string[] = []) => {
    const server = await startCliServer(dirs, extra);
    servers.push(server);
    return server;
  } };
}

describe('session logs through the service', () => {
  // One server for the first three cases (starting one costs seconds). Its event caps are smaller than
  // the defaults, so 100 reads show the per-run cap quickly; the rendered-result cap is the default.
  let shared: { dirs: ServerDirs; server: CliServer };
  beforeAll(async () => {
    const { dirs, start: go } = await start({ limits: { maxEventContentBytes: 256 * 1024, maxRunEventBytes: 4 * MiB } });
    await writeFile(path.join(dirs.workspace, 'big.txt'), `${'r'.repeat(1_999)}\n`.repeat(2_000));
    shared = { dirs, server: await go() };
    servers.splice(servers.indexOf(shared.server), 1);
  }, 60_000);
  afterAll(async () => {
    shared.server.child.kill('SIGKILL');
    await shared.server.exited;
  });

  it('the 117-byte nesting program: rendered text, response and log stay under the caps; the value is whole', { timeout: 60_000 }, async () => {
    const { dirs, server } = shared;
    const code = 'let v = new Array(250000).fill(0); for (let i = 0; i < 990; i++) v = [v]; return v;';
    const { status, text, json } = await postRun(server.url, { code, sessionId: 'deep' });
    expect(status).toBe(200);
    expect(json.isError).toBe(false);
    const content = json.content as { type: string; text: string }[];
    expect(Buffer.byteLength(content[0].text)).toBeLessThan(MiB + 1024);
    expect(content[0].text).toMatch(/\[result text truncated at 1048576 bytes/);
    // The value is the program's whole value.
    let value = (json.value as { result: unknown }).result;
    for (let i = 0; i < 990; i++) value = (value as unknown[])[0];
    expect((value as number[]).length).toBe(250_000);
    expect(text.length).toBeLessThan(4 * MiB);
    const log = await stat(path.join(dirs.data, 'sessions', 'deep.jsonl'));
    expect(log.size).toBeLessThan(256 * 1024 + 64 * 1024);
  });

  it('100 reads of a 4 MB file keep the log under the per-run cap, and every call leaves its events', { timeout: 120_000 }, async () => {
    // 500 KB pages of the file, so the test is quick; uncapped, 100 of them would be about 50 MB of log.
    const { dirs, server } = shared;
    const code = "let n = 0; for (let i = 0; i < 100; i++) { await tools.read({ file_path: 'big.txt', offset: 1 + (i % 8) * 250, limit: 250 }); n++; } return n;";
    const { status, text, json } = await postRun(server.url, { code, sessionId: 'reads' });
    expect(status).toBe(200);
    expect(json.value).toEqual({ logs: [], result: 100 });
    const events = json.events as { type: string; content?: { text: string }[] }[];
    const done = events.filter((e) => e.type === 'tool/ptc-dispatch');
    expect(done.length).toBe(100);
    expect(events.filter((e) => e.type === 'tool/ptc-dispatch-start').length).toBe(100);
    expect(done[0].content!.at(-1)!.text).toMatch(/\[content truncated: \d+ bytes in 1 block, 262144 kept; over the 262144-byte cap/);
    expect(done[99].content!.at(-1)!.text).toMatch(/\[content truncated: \d+ bytes in 1 block, 0 kept; this run's stored events reached the 4194304-byte cap/);
    const log = await stat(path.join(dirs.data, 'sessions', 'reads.jsonl'));
    expect(log.size).toBeLessThan(4 * MiB + 256 * 1024);
    expect(text.length).toBeLessThan(4 * MiB + 512 * 1024);
  });

  it('a large log: after=999999 answers an empty last page, pages hold their order, and /healthz answers while reads are in flight', { timeout: 120_000 }, async () => {
    const { dirs, server } = shared;
    const sessions = path.join(dirs.data, 'sessions');
    await mkdir(sessions, { recursive: true });
    const count = 60_000;
    const out = createWriteStream(path.join(sessions, 'huge.jsonl'));
    const pad = 'p'.repeat(900);
    for (let seq = 1; seq <= count; seq++) {
      const ok = out.write(
        `${JSON.stringify({ seq, at: '2026-01-01T00:00:00.000Z', type: 'tool/result', sessionId: 'huge', callId: `c${seq}`, name: 'echo', isError: false, content: [{ type: 'text', text: pad }] })}\n`,
      );
      if (!ok) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');

    const order: string[] = [];
    const reads = [
      ...Array.from({ length: 6 }, () => '?after=999999'),
      ...Array.from({ length: 6 }, (_, i) => `?after=${10_000 * i}&limit=1000`),
    ].map(async (query) => {
      const response = await fetch(`${server.url}/v1/sessions/huge/events${query}`);
      expect(response.status).toBe(200);
      const page = (await response.json()) as { events: { seq: number }[]; next?: number };
      order.push('read');
      return { query, page };
    });
    const health = (async () => {
      const response = await fetch(`${server.url}/healthz`);
      expect(response.status).toBe(200);
      order.push('healthz');
    })();
    const pages = await Promise.all(reads);
    await health;
    expect(order.indexOf('healthz')).toBeLessThan(order.lastIndexOf('read'));
    for (const { query, page } of pages) {
      if (query === '?after=999999') {
        expect(page).toEqual({ events: [] });
        continue;
      }
      const after = Number(/after=(\d+)/.exec(query)![1]);
      expect(page.events.map((e) => e.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => after + i + 1));
      expect(page.next).toBe(after + 1000);
    }
    const last = (await (await fetch(`${server.url}/v1/sessions/huge/events?after=${count - 3}`)).json()) as { events: { seq: number }[]; next?: number };
    expect(last.events.map((e) => e.seq)).toEqual([count - 2, count - 1, count]);
    expect(last.next).toBeUndefined();
  });

  it('a data folder that cannot be written: the run answers and says its events were lost, /readyz fails with the cause, new runs get 503, reads fail clearly, and recovery needs no restart', { timeout: 60_000 }, async () => {
    const { dirs, start: go } = await start();
    const server = await go();
    // A first run waits for the sandbox pool; then the server is ready.
    expect((await postRun(server.url, { code: 'return 0', sessionId: 'warm' })).status).toBe(200);
    // Readiness also waits for the pool to refill after that run: a loaded machine takes a moment.
    await expect.poll(async () => (await fetch(`${server.url}/readyz`)).status, { timeout: 30_000 }).toBe(200);
    // The sessions folder is replaced by a file: nothing can be created in it (root or not).
    await rm(path.join(dirs.data, 'sessions'), { recursive: true, force: true });
    await writeFile(path.join(dirs.data, 'sessions'), 'not a folder');
    const run = await postRun(server.url, { code: 'return 1', sessionId: 'blocked' });
    expect(run.status).toBe(200);
    expect(run.json.value, run.text).toEqual({ logs: [], result: 1 });
    // The response does not claim events the log lacks.
    expect(run.json.eventsLost).toMatchObject({ code: 'EVENT_LOG_FAILED', reason: expect.stringMatching(/ENOTDIR|EEXIST/) });

    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { code: string; message: string };
    expect(body.code).toBe('NOT_READY');
    expect(body.message).toMatch(/session logs cannot be written \((ENOTDIR|EEXIST)\)/);
    expect(body.message).not.toContain(dirs.base);
    const read = await fetch(`${server.url}/v1/sessions/blocked/events`);
    expect(read.status).toBe(503);
    expect(((await read.json()) as { code: string }).code).toBe('EVENT_LOG_UNAVAILABLE');
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    // While writes fail, new runs are refused at once instead of running unrecorded.
    const refused = await postRun(server.url, { code: 'return 1', sessionId: 'blocked' });
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ code: 'STORAGE_UNAVAILABLE', message: expect.stringMatching(/session logs cannot be written \((ENOTDIR|EEXIST)\)/) });
    expect(refused.text).not.toContain(dirs.base);

    await rm(path.join(dirs.data, 'sessions'));
    // Recovery without a restart: the probe (at most once a second) finds the folder writable again.
    await expect.poll(async () => (await fetch(`${server.url}/readyz`)).status, { timeout: 30_000 }).toBe(200);
    const again = await postRun(server.url, { code: 'return 2', sessionId: 'blocked' });
    expect(again.status).toBe(200);
    expect(again.json.eventsLost).toBeUndefined();
    const page = (await (await fetch(`${server.url}/v1/sessions/blocked/events`)).json()) as { events: { callId: string; seq: number }[] };
    expect(page.events.map((e) => [e.seq, e.callId])).toEqual([[1, (again.json as { callId: string }).callId]]);
  });
});
