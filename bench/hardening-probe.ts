/**
 * Figures for the host's bounds against clients that do not read and full
 * disks, against a real `ptc serve` (in-process runtime, one process):
 *
 *   node --no-node-snapshot bench/hardening-probe.ts followers [--tree <checkout>]
 *     RSS with 30 followers that never read, on a 200 MB session log.
 *   node --no-node-snapshot bench/hardening-probe.ts full-disk [--tree <checkout>] [--runs <n>]
 *     heap and RSS after 400 (or n) runs against a full 30 MB tmpfs (root only;
 *     unmounted on exit, SIGINT and SIGTERM included).
 *
 * `--tree` runs another checkout's CLI (an older commit, for comparison).
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { treeRss } from './capacity-probe.ts';

const MiB = 1024 * 1024;
const here = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const scenario = args[0];
const treeAt = args.indexOf('--tree');
const tree = treeAt >= 0 ? path.resolve(args[treeAt + 1]) : here;
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(args[runsAt + 1]) : 400;

interface Served {
  url: string;
  pid: number;
  stop(): Promise<void>;
  exited: Promise<string>;
}

async function serve(base: string, data: string, extra: string[] = []): Promise<Served> {
  const workspace = path.join(base, 'workspace');
  await mkdir(workspace, { recursive: true });
  await writeFile(path.join(workspace, 'big.txt'), `${'r'.repeat(1_999)}\n`.repeat(2_000));
  const config = path.join(base, 'ptc.config.json');
  await writeFile(config, JSON.stringify({ rateLimit: { max: 1_000_000, timeWindow: 60_000 }, maxConcurrentRunsPerClient: 1_000 }));
  const child = spawn(
    path.join(here, 'node_modules/.bin/node'),
    ['--no-node-snapshot', path.join(tree, 'services/cli.ts'), 'serve', '--port', '0', '--config', config, '--data', data, '--workspace', workspace, '--runtime', 'in-process', '--log-level', 'error', ...extra],
    { cwd: base, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4096)));
  const exited = new Promise<string>((resolve) => child.on('exit', (code, signal) => resolve(`${code ?? signal}: ${stderr.split('\n').filter(Boolean).slice(-2).join(' | ')}`)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /ptc listening on (\S+)\r?\n/.exec(out);
      if (match !== null) resolve(match[1]);
    });
    void exited.then((why) => reject(new Error(`ptc serve exited before listening (${why})`)));
  });
  await waitReady(url);
  return {
    url,
    pid: child.pid!,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if ((await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function metric(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return match === null ? undefined : Number(match[1]);
}

const mib = (bytes: number | undefined) => (bytes === undefined ? 'n/a' : `${(bytes / MiB).toFixed(0)} MiB`);

async function followers(): Promise<void> {
  const base = await mkdtemp(path.join(tmpdir(), 'ptc-probe-follow-'));
  const data = path.join(base, 'data');
  await mkdir(path.join(data, 'sessions'), { recursive: true });
  const out = createWriteStream(path.join(data, 'sessions', 'huge.jsonl'));
  const pad = 'p'.repeat(8 * 1024);
  for (let seq = 1; seq <= Math.ceil((200 * 1_000_000) / pad.length); seq++) {
    const line = { seq, at: '2026-01-01T00:00:00.000Z', type: 'tool/result', sessionId: 'huge', callId: `c${seq}`, name: 'echo', isError: false, content: [{ type: 'text', text: pad }] };
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  const server = await serve(base, data);
  const start = treeRss(server.pid);
  const { hostname, port } = new URL(server.url);
  const sockets: net.Socket[] = [];
  for (let i = 0; i < 30; i++) {
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    socket.write('GET /v1/sessions/huge/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');
    socket.pause();
    sockets.push(socket);
  }
  let peak = start ?? 0;
  let died: string | undefined;
  void server.exited.then((why) => (died = why));
  const t0 = Date.now();
  // Past the 30 s write stall the followers are dropped.
  while (Date.now() - t0 < 45_000 && died === undefined) {
    peak = Math.max(peak, treeRss(server.pid) ?? 0);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const end = died === undefined ? treeRss(server.pid) : undefined;
  const healthz = died === undefined ? (await fetch(`${server.url}/healthz`)).status : 'n/a';
  console.log(`followers: 30 non-reading on a 200 MB log: RSS ${mib(start)} at start, peak ${mib(peak)}, ${mib(end)} after 45 s; /healthz ${healthz}${died === undefined ? '' : `; the server died: ${died}`}`);
  for (const socket of sockets) socket.destroy();
  await server.stop();
  await rm(base, { recursive: true, force: true });
}

async function fullDisk(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('full-disk mounts a tmpfs: run as root');
  const base = await mkdtemp(path.join(tmpdir(), 'ptc-probe-disk-'));
  const data = path.join(base, 'data');
  await mkdir(data);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=30m', 'tmpfs', data]);
  const unmount = () => execFileSync('umount', ['-l', data]);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      unmount();
      void rm(base, { recursive: true, force: true }).finally(() => process.exit(1));
    });
  }
  try {
    const server = await serve(base, data);
    let died: string | undefined;
    void server.exited.then((why) => (died = why));
    // 100 reads of a 4 MB file: each run stores its events' cap.
    const code = "for (let i = 0; i < 100; i++) await tools.read({ file_path: 'big.txt', offset: 1 + (i % 8) * 250, limit: 250 }); return 1;";
    const heapStart = await metric(server.url, 'nodejs_heap_size_used_bytes');
    const statuses = new Map<string, number>();
    let ran = 0;
    for (; ran < RUNS && died === undefined; ran++) {
      const i = ran;
      const response = await fetch(`${server.url}/v1/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code, sessionId: `s${i % 20}` }) }).catch(() => undefined);
      const body = (await response?.json().catch(() => undefined)) as { eventsLost?: unknown; code?: string } | undefined;
      const key = response === undefined ? 'no answer' : `${response.status}${body?.eventsLost !== undefined ? ' eventsLost' : ''}${body?.code !== undefined ? ` ${body.code}` : ''}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      if ((ran + 1) % 10 === 0 && died === undefined) console.log(`  ${ran + 1} runs: heap ${mib(await metric(server.url, 'nodejs_heap_size_used_bytes').catch(() => undefined))}`);
    }
    const heap = died === undefined ? await metric(server.url, 'nodejs_heap_size_used_bytes') : undefined;
    const ready = died === undefined ? (await fetch(`${server.url}/readyz`)).status : 'n/a';
    console.log(
      `full disk: ${ran} runs on a 30 MB tmpfs: heap ${mib(heapStart)} at start, ${mib(heap)} after, RSS ${mib(died === undefined ? treeRss(server.pid) : undefined)}; /readyz ${ready}; answers ${JSON.stringify(Object.fromEntries(statuses))}${died === undefined ? '' : `; the server died: ${died}`}`,
    );
    await server.stop();
  } finally {
    unmount();
    await rm(base, { recursive: true, force: true });
  }
}

if (scenario === 'followers') await followers();
else if (scenario === 'full-disk') await fullDisk();
else throw new Error('usage: bench/hardening-probe.ts followers|full-disk [--tree <checkout>]');
