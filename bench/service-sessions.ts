/**
 * `npm run bench:service -- --sessions [--runs 10000 --connections 8 --runtime process]`:
 * a real `ptc serve` (default settings) takes `--runs` trivial POST /v1/run,
 * each in a session of its own, from `--connections` keep-alive clients. The
 * server's open file descriptors are sampled all along (from /proc): the
 * JSONL sink holds at most `limits.maxOpenSessionFiles` session files open,
 * so the count stays flat however many sessions there are. Then every
 * session's events are read back through GET /v1/sessions/:id/events.
 * Prints runs ok / failed, the fds before and at most during the runs (and
 * what they are at the end: sockets, session files, pipes), the events read
 * back and the sessions with none. Target (2 cores): 10,000 sessions, fds
 * ≤ 100, every event readable. Each client connection is a socket of the
 * server's too: the fds grow with `--connections`, not with the sessions.
 * Figures only.
 */
import { mkdir, mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { flag } from './section.ts';
import type { StartServer } from './service.bench.ts';

/** Runs `work(i)` for i in [0, count), `lanes` at a time. */
async function inLanes(count: number, lanes: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/** The server's open fds by kind: `socket`, `pipe`, `session file`, …; their targets name no session. */
async function fdKinds(pid: number): Promise<string> {
  const kinds = new Map<string, number>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => 'closed meanwhile');
    const kind = target.endsWith('.jsonl') ? 'session file' : target.replace(/:\[\d+\]$/, '').replace(/^anon_inode:\[?([^\]]*)\]?$/, '$1');
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return [...kinds]
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');
}

/** `startServer` comes from service.bench.ts, which imports this module when asked for `--sessions`. */
export async function runSessions(argv: readonly string[], startServer: StartServer): Promise<void> {
  const runs = Number(flag(argv, 'runs', '10000'));
  const connections = Number(flag(argv, 'connections', '8'));
  const runtime = flag(argv, 'runtime', 'process');
  console.log(`sessions: POST /v1/run ×${runs}, each in a session of its own, ${connections} connections, runtime ${runtime}; target fds ≤ 100, every event readable`);
  const cwd = await mkdtemp(path.join(tmpdir(), 'ptc-bench-sessions-'));
  await mkdir(path.join(cwd, 'workspace'), { recursive: true });
  const server = await startServer(cwd, runtime, {});
  try {
    const fds = async () => (await readdir(`/proc/${server.pid}/fd`)).length;
    const before = await fds();
    let peak = before;
    const sampler = setInterval(() => void fds().then((n) => (peak = Math.max(peak, n)), () => undefined), 20);
    let failed = 0;
    const started = performance.now();
    await inLanes(runs, connections, async (i) => {
      const response = await fetch(`${server.url}/v1/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: `return ${i}`, sessionId: `bench-${i}` }),
      });
      const body = (await response.json()) as { isError?: boolean };
      if (!response.ok || body.isError !== false) failed++;
    });
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    console.log(`sessions: ${runs - failed} ok, ${failed} failed in ${seconds.toFixed(1)} s; server fds ${before} before, at most ${peak} during; at the end: ${await fdKinds(server.pid)}`);
    let events = 0;
    let empty = 0;
    await inLanes(runs, connections, async (i) => {
      const body = (await (await fetch(`${server.url}/v1/sessions/bench-${i}/events`)).json()) as { events?: unknown[] };
      const count = body.events?.length ?? 0;
      events += count;
      if (count === 0) empty++;
    });
    console.log(`sessions: read back ${events} events from ${runs} sessions, ${empty} with none; server fds ${await fds()} afterwards`);
  } finally {
    await server.stop();
    await rm(cwd, { recursive: true, force: true });
  }
}
