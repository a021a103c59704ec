/**
 * `npm run bench:service -- --capacity [--runs 1000 --sleep-ms 2000 --runtime process --repeat 3]`:
 * a real `ptc serve` (default settings, but `maxConcurrentRunsPerClient` and
 * `maxConnectionsPerClient` raised through its config file: every request
 * comes from one loopback client) with a stdio MCP server whose `sleep` tool
 * waits (bench/sleep-mcp-server.ts). Sends `--runs` POST /v1/run at once,
 * each awaiting `sleepy__sleep` for `--sleep-ms`, and prints runs ok / busy
 * (503) / failed, wall against the sleep, p50 / p99 of run wall − sleep,
 * peak RSS of the server and its children (sandbox processes, MCP server),
 * CPU per run split by process (and this load generator's own),
 * memory per waiting run. Target (2 cores, 24 GiB): all succeed, wall ≤ 5 s,
 * peak RSS ≤ 2.5 GiB. Figures only. The burst runs `--repeat` times (default
 * 3), each against a fresh server, and the median wall is printed last: one
 * burst on a shared machine swings by ±15 %.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeCpuSplit, ownCpuMs, printCapacity, processCpuMs, treeCpuMs, watchPeakRss } from './capacity-probe.ts';
import { flag, median } from './section.ts';
import type { StartServer } from './service.bench.ts';

/** `startServer` comes from service.bench.ts, which imports this module when asked for `--capacity`. */
export async function runCapacity(argv: readonly string[], startServer: StartServer): Promise<void> {
  const runs = Number(flag(argv, 'runs', '1000'));
  const sleepMs = Number(flag(argv, 'sleep-ms', '2000'));
  const runtime = flag(argv, 'runtime', 'process');
  const repeat = Math.max(1, Number(flag(argv, 'repeat', '3')));
  console.log(`capacity: POST /v1/run ×${runs} at once, each awaiting a ${sleepMs} ms MCP tool, runtime ${runtime}; target all ok, wall ≤ 5 s, peak RSS ≤ 2.5 GiB`);
  const walls: number[] = [];
  for (let round = 0; round < repeat; round++) walls.push(await burst(runs, sleepMs, runtime, startServer));
  const seconds = walls.map((ms) => (ms / 1000).toFixed(2));
  console.log(`service, ${runtime}: median wall ${(median([...walls]) / 1000).toFixed(2)} s over ${walls.length} bursts (${seconds.join(', ')})`);
}

/** One burst against a fresh server; prints its figures and returns its wall time, ms. */
async function burst(runs: number, sleepMs: number, runtime: string, startServer: StartServer): Promise<number> {
  const cwd = await mkdtemp(path.join(tmpdir(), 'ptc-bench-capacity-'));
  await mkdir(path.join(cwd, 'workspace'), { recursive: true });
  const server = await startServer(cwd, runtime, {
    maxConcurrentRunsPerClient: Math.max(1024, runs * 2),
    maxConnectionsPerClient: Math.max(1024, runs * 2),
    maxConnections: Math.max(1024, runs * 2),
    mcpServers: { sleepy: { command: process.execPath, args: [path.join(import.meta.dirname, 'sleep-mcp-server.ts')] } },
  });
  const post = (code: string, i: number) =>
    fetch(`${server.url}/v1/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code, sessionId: `capacity-${i % 16}` }),
    });
  try {
    // Warm-up: the MCP connection, sandbox children, session files.
    for (let i = 0; i < 32; i++) await (await post('return (await tools.sleepy__sleep({ ms: 1 })).structuredContent', i)).arrayBuffer();
    await sleep(500);
    const rss = watchPeakRss(server.pid);
    const cpuBefore = treeCpuMs(server.pid);
    const ownBefore = ownCpuMs(server.pid);
    const splitBefore = processCpuMs(server.pid);
    const clientBefore = process.cpuUsage();
    const code = `const r = await tools.sleepy__sleep({ ms: ${sleepMs} });\nreturn r.structuredContent;`;
    const runWallMs: number[] = [];
    let ok = 0;
    let busy = 0;
    let failed = 0;
    let firstFailure = '';
    const start = performance.now();
    await Promise.all(
      Array.from({ length: runs }, async (_, i) => {
        const began = performance.now();
        try {
          const response = await post(code, i);
          const text = await response.text();
          runWallMs.push(performance.now() - began);
          if (response.status === 503) busy++;
          else if (response.status === 200 && text.includes('"isError":false')) ok++;
          else {
            failed++;
            firstFailure ||= `${response.status} ${text.slice(0, 300)}`;
          }
        } catch (error) {
          failed++;
          firstFailure ||= String(error);
        }
      }),
    );
    const wallMs = performance.now() - start;
    const cpuAfter = treeCpuMs(server.pid);
    const ownAfter = ownCpuMs(server.pid);
    const splitAfter = processCpuMs(server.pid);
    const client = process.cpuUsage(clientBefore);
    const ownMs = ownBefore === undefined || ownAfter === undefined ? undefined : ownAfter - ownBefore;
    const cpuMs = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
    printCapacity({ label: `service, ${runtime}`, runs, sleepMs, ok, busy, failed, wallMs, runWallMs, rss: rss.stop(), cpuMs, ownCpuMs: ownMs, load: loadavg()[0] });
    // The load generator (this process) shares the machine's cores with the server.
    console.log(`  ${describeCpuSplit(server.pid, 'server', splitBefore, splitAfter, (client.user + client.system) / 1000, runs)}`);
    if (firstFailure !== '') console.log(`  first failure: ${firstFailure}`);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const pool = metrics.split('\n').filter((line) => line.startsWith('ptc_pool_'));
    console.log(`  ${pool.join('; ')}`);
    return wallMs;
  } finally {
    const exit = await server.stop();
    if (exit !== 0) console.log(`  (server exited with ${exit})`);
    await rm(cwd, { recursive: true, force: true });
  }
}
