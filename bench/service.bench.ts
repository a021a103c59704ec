/**
 * `npm run bench:service [-- --duration 20 --connections 16 --runtime process]`
 * (`-- --capacity`: the capacity mode instead, see bench/service-capacity.ts;
 * `-- --sessions`: 10,000 sessions against the server's open fds, see bench/service-sessions.ts;
 * `-- --database [--replicas 3]`: JSONL against PostgreSQL, see bench/service-database.ts):
 * autocannon against a real `ptc serve` (a child process, port 0) on
 * POST /v1/run: a trivial program, then a program making 10 nested calls.
 * Prints runs/s, latency p50/p99 and errors (transport errors, non-2xx and
 * runs that came back isError), and where /proc exists the CPU time per run
 * of the server, its sandbox children and autocannon (all share the cores).
 * Figures only; nothing is asserted.
 *
 * `-- --typecheck enforce` (or `warn`): the trivial program against a server
 * with type-checking off, then one with it on, and the ratio of their runs/s.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { ISOLATE_HOST_FLAGS } from '../sandbox/host-flags.ts';
import { serveCli } from '../test/helpers/serve-cli.ts';
import { flag, type BenchSection } from './section.ts';

const root = path.resolve(import.meta.dirname, '..');

interface Options {
  duration: number;
  connections: number;
  runtime: string;
  /** Compare type-checking off with this mode on the trivial program. */
  typecheck: string | undefined;
}

function parseOptions(argv: readonly string[]): Options {
  const typecheck = flag(argv, 'typecheck', '');
  if (!['', 'warn', 'enforce'].includes(typecheck)) throw new Error(`--typecheck must be warn or enforce (got ${typecheck})`);
  return {
    duration: Number(flag(argv, 'duration', '20')),
    connections: Number(flag(argv, 'connections', '16')),
    runtime: flag(argv, 'runtime', 'process'),
    typecheck: typecheck === '' ? undefined : typecheck,
  };
}

const SCENARIOS = [
  { name: 'trivial', code: 'return 1 + 1' },
  {
    name: '10 nested calls',
    code: "let n = 0;\nfor (let i = 0; i < 10; i++) n += (await tools.read({ file_path: 'bench.txt' })).lines.length;\nreturn n;",
  },
];

/** CPU time (user + system, all threads) of `pid`, ms; undefined where /proc is missing. */
function cpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** CPU ms so far of the server, of its children (the sandbox processes) and of this process (autocannon). */
function cpuSplit(serverPid: number): { server: number; children: number; load: number } | undefined {
  const server = cpuMs(serverPid);
  const load = cpuMs(process.pid);
  if (server === undefined || load === undefined) return undefined;
  let children = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(fields[1]) === serverPid) children += cpuMs(Number(entry)) ?? 0;
    } catch {
      // the process ended meanwhile
    }
  }
  return { server, children, load };
}

export interface BenchServer {
  url: string;
  pid: number;
  /** SIGTERM; resolves with the exit code (or the signal name). */
  stop(): Promise<number | string>;
}

/** How a service mode (service-capacity.ts, service-database.ts, service-sessions.ts) starts its server: {@link startServer}. */
export type StartServer = (cwd: string, runtime: string, config: Record<string, unknown>) => Promise<BenchServer>;

/** `ptc serve` in `cwd` on port 0, its config file the defaults below plus `config`. */
export async function startServer(cwd: string, runtime: string, config: Record<string, unknown> = {}): Promise<BenchServer> {
  await writeFile(
    path.join(cwd, 'ptc.config.json'),
    JSON.stringify({ rateLimit: { max: 1_000_000_000, timeWindow: 60_000 }, maxConcurrentRunsPerClient: 1024, logLevel: 'warn', ...config }),
  );
  // PTC_BENCH_SERVER_FLAGS: extra Node flags for the server, such as `--cpu-prof --cpu-prof-dir=DIR` (Node refuses those in NODE_OPTIONS).
  const extraFlags = (process.env.PTC_BENCH_SERVER_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
  const server = await serveCli({
    cwd,
    args: ['--runtime', runtime],
    nodeFlags: [...ISOLATE_HOST_FLAGS, '--max-semi-space-size=16', ...extraFlags],
    stderr: 'inherit',
  });
  for (let i = 0; i < 200; i++) {
    if ((await fetch(`${server.url}/readyz`)).ok) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: server.url, pid: server.child.pid ?? 0, stop: () => server.stop() };
}

/** Prints the figures of one load; returns its runs/s. */
async function load(url: string, serverPid: number, code: string, options: Options): Promise<number> {
  let failedRuns = 0;
  const body = JSON.stringify({ code });
  const post = { method: 'POST' as const, headers: { 'content-type': 'application/json' }, body };
  // Warm-up: isolates, JIT, the session file.
  for (let i = 0; i < 50; i++) await fetch(`${url}/v1/run`, post).then((response) => response.arrayBuffer());
  const before = cpuSplit(serverPid);
  const result = await autocannon({
    url: `${url}/v1/run`,
    connections: options.connections,
    duration: options.duration,
    requests: [
      {
        ...post,
        onResponse(status, text) {
          if (status === 200 && text.includes('"isError":true')) failedRuns++;
        },
      },
    ],
  });
  const errors = result.errors + result.timeouts + result.non2xx + failedRuns;
  console.log(
    `  runs/s ${result.requests.average.toFixed(0)} (${result.requests.total} runs)  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  ` +
      `errors ${errors} (transport ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx}, isError ${failedRuns})`,
  );
  const after = cpuSplit(serverPid);
  const runs = result.requests.total;
  if (before !== undefined && after !== undefined && runs > 0) {
    const per = (key: 'server' | 'children' | 'load') => ((after[key] - before[key]) / runs).toFixed(2);
    console.log(`  CPU ms per run: server ${per('server')}, sandbox children ${per('children')}, autocannon ${per('load')}`);
  }
  return result.requests.average;
}

/** The trivial program with type-checking off, then in `mode`, each on a fresh server; prints both and the ratio. */
async function compareTypecheck(cwd: string, mode: string, options: Options): Promise<void> {
  const trivial = SCENARIOS[0];
  console.log(`POST /v1/run, ${options.connections} connections, ${options.duration} s each, runtime ${options.runtime}: ${trivial.name}, typecheck off vs ${mode}`);
  const rates: number[] = [];
  for (const typecheck of ['off', mode]) {
    const server = await startServer(cwd, options.runtime, { typecheck });
    try {
      console.log(`- typecheck ${typecheck}`);
      rates.push(await load(server.url, server.pid, trivial.code, options));
    } finally {
      const code = await server.stop();
      if (code !== 0) console.log(`  (server exited with ${code})`);
    }
  }
  console.log(`- typecheck ${mode} / off: ${((rates[1] / rates[0]) * 100).toFixed(0)} % of the runs/s`);
}

async function run(options: Options = parseOptions(process.argv.slice(2))): Promise<void> {
  if (process.argv.includes('--database')) {
    const { runDatabaseBench } = await import('./service-database.ts');
    await runDatabaseBench(process.argv.slice(2), startServer);
    return;
  }
  if (process.argv.includes('--capacity')) {
    const { runCapacity } = await import('./service-capacity.ts');
    await runCapacity(process.argv.slice(2), startServer);
    return;
  }
  if (process.argv.includes('--sessions')) {
    const { runSessions } = await import('./service-sessions.ts');
    await runSessions(process.argv.slice(2), startServer);
    return;
  }
  const cwd = await mkdtemp(path.join(tmpdir(), 'ptc-bench-service-'));
  await mkdir(path.join(cwd, 'workspace'), { recursive: true });
  await writeFile(path.join(cwd, 'workspace/bench.txt'), 'one\ntwo\nthree\n');
  if (options.typecheck !== undefined) {
    try {
      await compareTypecheck(cwd, options.typecheck, options);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
    return;
  }
  const server = await startServer(cwd, options.runtime);
  try {
    console.log(`POST /v1/run, ${options.connections} connections, ${options.duration} s each, runtime ${options.runtime}`);
    for (const scenario of SCENARIOS) {
      console.log(`- ${scenario.name}`);
      await load(server.url, server.pid, scenario.code, options);
    }
  } finally {
    const code = await server.stop();
    if (code !== 0) console.log(`  (server exited with ${code})`);
    await rm(cwd, { recursive: true, force: true });
  }
}

export const section: BenchSection = {
  name: 'service',
  description: 'autocannon on POST /v1/run against ptc serve: trivial and 10 nested calls',
  run: () => run(),
};

if (import.meta.main) await run();
