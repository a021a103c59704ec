/**
 * `npm run soak [-- --duration 20]`: a real `ptc serve` (child process, the
 * default `process` runtime) under 32 concurrent mixed clients for a set
 * time: trivial runs, nested-call runs, failing runs, SSE runs and direct
 * tool calls. Then a graceful stop, and the invariants:
 * - no 5xx response;
 * - server RSS growth from warm-up to the end under --max-rss-growth-mib;
 * - every completed call's events are in its session log (counted from the
 *   JSONL files after the server has exited).
 * Prints the figures; exits 1 if an invariant is broken. Not part of
 * `npm test` (CI time budget): see SECURITY.md.
 *
 * Options: --duration <s> (120), --clients <n> (32), --runtime <kind>
 * (process), --max-rss-growth-mib <MiB> (150), --warmup <s> (5),
 * --replicas <n> (1), --database (on by itself when --replicas > 1).
 *
 * With --database, the replicas share an embedded PostgreSQL and one
 * workspace; each client sends its calls to the replicas in turn, so every
 * session's runs spread over all of them. The logs are then read from the
 * database, and one more invariant holds: each session's seqs are 1..n with
 * no gap and no duplicate.
 */
import pg from 'pg';
import { ISOLATE_HOST_FLAGS } from '../sandbox/host-flags.ts';
import { serveCli, type ServedCli } from '../test/helpers/serve-cli.ts';
import { startTestDatabase } from '../test/postgres/embedded.ts';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: options } = parseArgs({
  options: {
    duration: { type: 'string', default: '120' },
    clients: { type: 'string', default: '32' },
    runtime: { type: 'string', default: 'process' },
    'max-rss-growth-mib': { type: 'string', default: '150' },
    warmup: { type: 'string', default: '5' },
    keep: { type: 'boolean', default: false },
    replicas: { type: 'string', default: '1' },
    database: { type: 'boolean', default: false },
  },
});
const durationMs = Number(options.duration) * 1000;
const clients = Number(options.clients);
const maxGrowthMiB = Number(options['max-rss-growth-mib']);
const warmupMs = Number(options.warmup) * 1000;
const replicaCount = Math.max(1, Number(options.replicas));
const useDatabase = options.database || replicaCount > 1;

// ---- the servers ----
const base = await mkdtemp(path.join(tmpdir(), 'ptc-soak-'));
const data = path.join(base, 'data');
const workspace = path.join(base, 'workspace');
const config = path.join(base, 'ptc.config.json');
const database = useDatabase ? await startTestDatabase() : undefined;
// Every client shares 127.0.0.1: rate and per-client caps would turn the soak into a 429 test.
await writeFile(
  config,
  JSON.stringify({
    rateLimit: { max: 10_000_000, timeWindow: 60_000 },
    maxConcurrentRunsPerClient: 1_000,
    maxConnectionsPerClient: 100_000,
    maxConnections: 100_000,
    ...(database === undefined ? {} : { databaseUrl: database.url }),
  }),
);
async function startReplica(index: number): Promise<ServedCli> {
  const dataDir = replicaCount === 1 ? data : `${data}-${index}`;
  return serveCli({
    cwd: base,
    args: ['--config', config, '--data', dataDir, '--workspace', workspace, '--runtime', options.runtime, '--mode', 'both', '--log-level', 'warn'],
    nodeFlags: [...ISOLATE_HOST_FLAGS, '--max-semi-space-size=16'],
  });
}
const replicas: ServedCli[] = [];
for (let i = 0; i < replicaCount; i++) replicas.push(await startReplica(i));
const child = replicas[0].child;
const url = replicas[0].url;
await fetch(`${url}/v1/tools/write`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ arguments: { file_path: 'notes.txt', content: 'alpha\nbeta\ngamma x\n' } }),
});

/** RSS of a pid in bytes, from /proc (Linux); 0 where unavailable. */
async function rssOf(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match === null ? 0 : Number(match[1]) * 1024;
  } catch {
    return 0;
  }
}

/** The server and its sandbox children (one level down). */
async function treeRss(pid: number): Promise<number> {
  let total = await rssOf(pid);
  try {
    const kids = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8')).trim().split(/\s+/).filter(Boolean);
    for (const kid of kids) total += await rssOf(Number(kid));
  } catch {
    // not Linux: the server alone
  }
  return total;
}

// ---- the clients ----
type Kind = 'trivial' | 'nested' | 'failing' | 'sse' | 'direct';
const KINDS: Kind[] = ['trivial', 'nested', 'failing', 'sse', 'direct'];
const PROGRAMS: Record<Exclude<Kind, 'direct'>, string> = {
  trivial: 'return 1 + 1',
  nested: "const files = await tools.glob({ pattern: '*' });\nconst hits = await tools.grep({ pattern: 'beta' });\nconst text = await tools.read({ file_path: 'notes.txt' });\nreturn { files, hits, size: JSON.stringify(text).length };",
  failing: "console.log('about to fail');\nawait tools.read({ file_path: 'missing.txt' });",
  sse: "for (let i = 0; i < 3; i++) { console.log('step', i); await tools.glob({ pattern: '*.txt' }); }\nreturn 'streamed';",
};

interface StoredEvent {
  type: string;
  sessionId: string;
  seq: number;
}
const statuses = new Map<string, number>();
const latencies: number[] = [];
const byKind = new Map<Kind, number>();
const completedEvents: StoredEvent[] = [];
let completedCalls = 0;
/** A failing program that succeeded, or any other call that failed. */
let unexpected = 0;
/** Every unexpected outcome, as it happened: what was sent, what came back, and when. */
const surprises: string[] = [];
const note = (what: string) => surprises.push(`+${((performance.now() - t0) / 1000).toFixed(1)} s ${what}`);
const clip = (text: string, max = 600) => (text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text);
let networkErrors = 0;
let fiveHundreds = 0;
const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

function parseSseResult(text: string): { isError: boolean; events: StoredEvent[] } | undefined {
  let result: { isError: boolean; events: StoredEvent[] } | undefined;
  for (const block of text.split('\n\n')) {
    if (!block.startsWith('event: result')) continue;
    const data = block.split('\n').find((line) => line.startsWith('data: '));
    if (data !== undefined) result = JSON.parse(data.slice(6)) as { isError: boolean; events: StoredEvent[] };
  }
  return result;
}

let stopAt = Number.POSITIVE_INFINITY;
let t0 = 0;
async function client(id: number): Promise<void> {
  for (let i = 0; performance.now() < stopAt; i++) {
    const kind = KINDS[(id + i) % KINDS.length];
    const sessionId = `soak-${id % 16}`;
    const callId = `c${id}-${i}`;
    // Each client walks the replicas in turn: a session's runs land on all of them.
    const url = replicas[(id + i) % replicas.length].url;
    const started = performance.now();
    let response: Response;
    try {
      response =
        kind === 'direct'
          ? await fetch(`${url}/v1/tools/grep`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { pattern: 'gamma' }, sessionId, callId }) })
          : await fetch(`${url}/v1/run`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', ...(kind === 'sse' ? { accept: 'text/event-stream' } : {}) },
              body: JSON.stringify({ code: PROGRAMS[kind], sessionId, callId }),
            });
    } catch (error) {
      networkErrors++;
      note(`${kind} ${callId}: network error ${(error as Error).message} ${String((error as { cause?: unknown }).cause ?? '')}`);
      continue;
    }
    count(statuses, String(response.status));
    if (response.status >= 500) fiveHundreds++;
    if (response.status !== 200) {
      note(`${kind} ${callId}: HTTP ${response.status} after ${(performance.now() - started).toFixed(0)} ms: ${clip(await response.text())}`);
      continue;
    }
    const text = await response.text();
    const body = kind === 'sse' ? parseSseResult(text) : (JSON.parse(text) as { isError: boolean; events: StoredEvent[] });
    const latency = performance.now() - started;
    latencies.push(latency);
    if (body === undefined) {
      note(`${kind} ${callId}: SSE stream without a result event after ${latency.toFixed(0)} ms: ${clip(text)}`);
      continue;
    }
    completedCalls++;
    if (body.isError !== (kind === 'failing')) {
      unexpected++;
      note(`${kind} ${callId}: isError ${body.isError} after ${latency.toFixed(0)} ms: ${clip(kind === 'sse' ? text : JSON.stringify({ ...body, events: undefined }))}`);
    }
    byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
    completedEvents.push(...body.events);
  }
}

t0 = performance.now();
stopAt = t0 + durationMs;
const running = Array.from({ length: clients }, (_, id) => client(id));
await new Promise((resolve) => setTimeout(resolve, Math.min(warmupMs, durationMs / 4)));
const rssStart = await rssOf(child.pid!);
const treeStart = await treeRss(child.pid!);
let rssPeak = rssStart;
const sampler = setInterval(() => void rssOf(child.pid!).then((rss) => (rssPeak = Math.max(rssPeak, rss))), 1_000);
await Promise.all(running);
clearInterval(sampler);
const elapsed = performance.now() - t0;
const rssEnd = await rssOf(child.pid!);
const treeEnd = await treeRss(child.pid!);

for (const replica of replicas) replica.child.kill('SIGTERM');
const exitCodes = await Promise.all(replicas.map((r) => r.exited));
const exitCode = exitCodes.find((code) => code !== 0) ?? 0;

// ---- the session logs ----
const onDisk = new Set<string>();
let tornLines = 0;
/** Sessions whose seqs are not exactly 1..n (a gap or a duplicate across replicas). */
let disordered = 0;
if (database !== undefined) {
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  const { rows } = await db.query<{ session_id: string; seq: string; event: string }>('SELECT session_id, seq, event FROM ptc_events ORDER BY session_id, seq');
  await db.end();
  const seqs = new Map<string, number[]>();
  for (const row of rows) {
    const event = JSON.parse(row.event) as { type: string };
    onDisk.add(`${row.session_id}#${Number(row.seq)}#${event.type}`);
    let list = seqs.get(row.session_id);
    if (list === undefined) seqs.set(row.session_id, (list = []));
    list.push(Number(row.seq));
  }
  for (const list of seqs.values()) if (list.some((seq, i) => seq !== i + 1)) disordered++;
} else {
  const sessionsDir = path.join(data, 'sessions');
  for (const name of (await readdir(sessionsDir)).filter((n) => n.endsWith('.jsonl'))) {
    const lines = (await readFile(path.join(sessionsDir, name), 'utf8')).split('\n').filter((line) => line !== '');
    for (const line of lines) {
      try {
        const event = JSON.parse(line) as StoredEvent;
        onDisk.add(`${event.sessionId}#${event.seq}#${event.type}`);
      } catch {
        tornLines++;
      }
    }
  }
}
const missing = completedEvents.filter((e) => !onDisk.has(`${e.sessionId}#${e.seq}#${e.type}`)).length;

// ---- figures ----
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const sorted = [...latencies].sort((a, b) => a - b);
const pct = (p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]).toFixed(1);
const growthMiB = (rssEnd - rssStart) / 1024 / 1024;
console.log(
  `soak: ${clients} clients, ${(elapsed / 1000).toFixed(1)} s, runtime ${options.runtime}, ${replicaCount} replica${replicaCount > 1 ? 's' : ''} on ${database === undefined ? 'JSONL' : 'PostgreSQL'}`,
);
console.log(`  calls completed  ${completedCalls} (${(completedCalls / (elapsed / 1000)).toFixed(1)}/s): ${KINDS.map((k) => `${k} ${byKind.get(k) ?? 0}`).join(', ')}`);
console.log(`  outcomes         ${unexpected} unexpected (a failing run that succeeded, or another call that failed)`);
console.log(`  statuses         ${[...statuses].map(([s, n]) => `${s}×${n}`).join(' ')}; network errors ${networkErrors}`);
console.log(`  latency ms       p50 ${pct(50)}  p90 ${pct(90)}  p99 ${pct(99)}  max ${pct(100)}`);
console.log(`  server RSS MiB   after warm-up ${mib(rssStart)}, end ${mib(rssEnd)}, peak ${mib(rssPeak)} (growth ${growthMiB.toFixed(1)}, limit ${maxGrowthMiB})`);
console.log(`  tree RSS MiB     after warm-up ${mib(treeStart)}, end ${mib(treeEnd)} (server + sandbox children)`);
console.log(
  `  events           ${completedEvents.length} in responses, ${onDisk.size} stored, ${missing} missing, ${tornLines} torn${database === undefined ? '' : `, ${disordered} sessions with a gap or duplicate seq`}`,
);
console.log(`  shutdown         exit ${exitCode}`);

const broken: string[] = [];
if (fiveHundreds > 0) broken.push(`${fiveHundreds} responses were 5xx`);
if (networkErrors > 0) broken.push(`${networkErrors} requests failed at the network level`);
if (growthMiB > maxGrowthMiB) broken.push(`server RSS grew ${growthMiB.toFixed(1)} MiB (limit ${maxGrowthMiB})`);
if (missing > 0) broken.push(`${missing} events of completed calls are missing from the session logs`);
if (completedCalls === 0) broken.push('no call completed');
if (unexpected > 0) broken.push(`${unexpected} calls ended unlike their kind (see outcomes)`);
if (exitCode !== 0) broken.push(`a server exited with ${exitCode} on SIGTERM`);
if (disordered > 0) broken.push(`${disordered} sessions have a gap or a duplicate seq`);
if (surprises.length > 0) {
  console.log(`unexpected outcomes (${surprises.length}):`);
  for (const line of surprises) console.log(`  ${line}`);
}
if (broken.length > 0) {
  console.log(`FAILED: ${broken.join('; ')}`);
  const stderr = replicas.map((replica) => replica.stderr()).join('');
  if (stderr !== '') console.log(`server stderr (tail):\n${stderr.slice(-8000)}`);
  process.exitCode = 1;
} else {
  console.log('OK: every invariant held');
}
await database?.destroy();
if (!options.keep) await rm(base, { recursive: true, force: true });
else console.log(`  kept ${base}`);
