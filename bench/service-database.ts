/**
 * `npm run bench:service -- --database [--replicas 3 --duration 10 --connections 16]`:
 * the trivial run (`return 1 + 1`) against one `ptc serve` on JSONL, then one
 * on PostgreSQL (an embedded server in a temp folder), then (with
 * `--replicas N`, N > 1) N replicas on that database, each loaded by its own
 * autocannon. Prints runs/s, p99, events appended per second, and PostgreSQL
 * against JSONL. Target: one PostgreSQL replica keeps ≥ 80 % of JSONL's
 * runs/s. Figures only.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { startTestDatabase } from '../test/postgres/embedded.ts';
import { flag } from './section.ts';
import type { StartServer } from './service.bench.ts';

interface Figures {
  runsPerSecond: number;
  p99: number;
  runs: number;
  errors: number;
}

const body = JSON.stringify({ code: 'return 1 + 1', sessionId: 'bench' });
const post = { method: 'POST' as const, headers: { 'content-type': 'application/json' }, body };

/** Isolates, JIT, the session: before anything is counted. */
async function warm(urls: string[]): Promise<void> {
  for (const url of urls) for (let i = 0; i < 30; i++) await fetch(`${url}/v1/run`, post).then((r) => r.arrayBuffer());
}

async function load(urls: string[], duration: number, connections: number): Promise<Figures> {
  const results = await Promise.all(
    urls.map((url) => autocannon({ url: `${url}/v1/run`, connections: Math.max(1, Math.round(connections / urls.length)), duration, requests: [post] })),
  );
  return {
    runsPerSecond: results.reduce((sum, r) => sum + r.requests.average, 0),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    runs: results.reduce((sum, r) => sum + r.requests.total, 0),
    errors: results.reduce((sum, r) => sum + r.errors + r.timeouts + r.non2xx, 0),
  };
}

async function countEvents(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM ptc_events');
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}

export async function runDatabaseBench(argv: readonly string[], startServer: StartServer): Promise<void> {
  const duration = Number(flag(argv, 'duration', '10'));
  const connections = Number(flag(argv, 'connections', '16'));
  const replicas = Number(flag(argv, 'replicas', '1'));
  const runtime = flag(argv, 'runtime', 'process');
  const base = await mkdtemp(path.join(tmpdir(), 'ptc-bench-db-'));
  const database = await startTestDatabase();
  const cwd = async (name: string) => {
    const dir = path.join(base, name);
    await mkdir(path.join(dir, 'workspace'), { recursive: true });
    return dir;
  };
  const print = (label: string, f: Figures, events?: number) =>
    console.log(
      `- ${label}: runs/s ${f.runsPerSecond.toFixed(0)} (${f.runs} runs)  p99 ${f.p99} ms  errors ${f.errors}` +
        (events === undefined ? '' : `  events appended/s ${(events / duration).toFixed(0)}`),
    );
  try {
    console.log(`POST /v1/run trivial, ${connections} connections, ${duration} s each, runtime ${runtime}: JSONL vs PostgreSQL`);
    const jsonlServer = await startServer(await cwd('jsonl'), runtime, {});
    let jsonl: Figures;
    try {
      await warm([jsonlServer.url]);
      jsonl = await load([jsonlServer.url], duration, connections);
    } finally {
      await jsonlServer.stop();
    }
    // One tool/result per trivial run.
    print('JSONL, 1 replica', jsonl, jsonl.runs);

    const counts: number[] = [];
    for (const n of replicas > 1 ? [1, replicas] : [1]) {
      const servers = await Promise.all(Array.from({ length: n }, async (_, i) => startServer(await cwd(`pg-${n}-${i}`), runtime, { databaseUrl: database.url })));
      try {
        await warm(servers.map((s) => s.url));
        const before = await countEvents(database.url);
        const figures = await load(servers.map((s) => s.url), duration, connections);
        const appended = (await countEvents(database.url)) - before;
        counts.push(figures.runsPerSecond);
        print(`PostgreSQL, ${n} replica${n > 1 ? 's' : ''}`, figures, appended);
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
      }
    }
    console.log(`- PostgreSQL 1 replica / JSONL: ${((counts[0] / jsonl.runsPerSecond) * 100).toFixed(0)} % of the runs/s (target ≥ 80 %)`);
    if (counts.length > 1) console.log(`- PostgreSQL ${replicas} replicas / 1 replica: ${((counts[1] / counts[0]) * 100).toFixed(0)} % (on a shared machine the replicas share its cores)`);
  } finally {
    await database.destroy();
    await rm(base, { recursive: true, force: true });
  }
}
