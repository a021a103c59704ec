/**
 * Capacity through the library API: 1,000 programs at once, each awaiting a
 * host tool that sleeps 2 s, with `createCodeMode`'s default runtime options,
 * once per runtime. Prints runs ok / busy / failed, wall time against the
 * sleep, p50 / p99 of each run's wall minus the sleep, peak RSS of this
 * process and its children, and memory per waiting run. Asserts nothing.
 *
 * Targets (2 cores, 24 GiB): all succeed, wall ≤ 4 s, peak RSS ≤ 2 GiB.
 * `--runs N` and `--sleep-ms MS` change the load; `--cold` skips `ready()`
 * and the warm-up, so the burst meets a runtime that is still starting (no
 * run may be shed for the time its isolates take). Each runtime's burst runs
 * `--repeat N` times (default 3, each in a fresh process, the runtimes
 * taking turns): one burst on a shared machine swings by ±15 %, so the
 * median wall is printed after the bursts.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { defineTool } from '../src/define-tool.ts';
import { createMemoryEventSink } from '../src/event-sinks/memory-sink.ts';
import { createCodeMode } from '../entries/index.ts';
import { createToolRegistry } from '../src/registry.ts';
import { ownCpuMs, printCapacity, treeCpuMs, watchPeakRss } from './capacity-probe.ts';
import { median, type BenchSection } from './section.ts';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined ? Number(process.argv[at + 1]) : fallback;
}

const slow = defineTool({
  name: 'slow',
  description: 'Waits ms milliseconds, like a slow API.',
  parameters: { ms: { type: 'integer', required: true } },
  output: { schema: { type: 'integer' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
  isConcurrencySafe: () => true,
  execute: async (args) => {
    await sleep(args.ms);
    return args.ms;
  },
});

async function burst(runtime: 'in-process' | 'process', runs: number, sleepMs: number): Promise<void> {
  const registry = createToolRegistry({ eventSink: createMemoryEventSink() });
  registry.register(slow);
  const codeMode = createCodeMode({ registry, runtime });
  const dispatch = (code: string, i: number) =>
    registry.dispatch({ name: 'run_code', arguments: { code, description: 'capacity bench' }, sessionId: `capacity-${i % 16}` });
  try {
    if (!process.argv.includes('--cold')) {
      // Warm-up: children (or the in-process runtime's burst threads) up, warm pools filled, JIT warm.
      await codeMode.ready();
      for (let i = 0; i < 20; i++) await dispatch('return 1', i);
      await sleep(500);
    }
    const rss = watchPeakRss(process.pid);
    const cpuBefore = treeCpuMs(process.pid);
    const ownBefore = ownCpuMs(process.pid);
    const code = `const slept = await tools.slow({ ms: ${sleepMs} });\nreturn slept;`;
    const runWallMs: number[] = [];
    let ok = 0;
    let busy = 0;
    let failed = 0;
    const failures = new Map<string, number>();
    const start = performance.now();
    await Promise.all(
      Array.from({ length: runs }, async (_, i) => {
        const began = performance.now();
        const result = await dispatch(code, i);
        runWallMs.push(performance.now() - began);
        if (!result.isError) ok++;
        else if (result.error.message.startsWith('code run failed (busy)')) busy++;
        else {
          failed++;
          const why = result.error.message.split(':')[0];
          failures.set(why, (failures.get(why) ?? 0) + 1);
        }
      }),
    );
    const wallMs = performance.now() - start;
    const cpuAfter = treeCpuMs(process.pid);
    const ownAfter = ownCpuMs(process.pid);
    const ownMs = ownBefore === undefined || ownAfter === undefined ? undefined : ownAfter - ownBefore;
    const cpuMs = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
    printCapacity({ label: `library, ${runtime}${process.argv.includes('--cold') ? ', cold' : ''}`, runs, sleepMs, ok, busy, failed, wallMs, runWallMs, rss: rss.stop(), cpuMs, ownCpuMs: ownMs, load: loadavg()[0] });
    if (failures.size > 0) console.log(`  failed: ${[...failures].map(([why, count]) => `${count}× ${why}`).join('; ')}`);
  } finally {
    await codeMode.close();
  }
}

const self = fileURLToPath(import.meta.url);

/** Each burst in a fresh process of its own: RSS an earlier burst left behind must not count. */
export async function benchCapacity(): Promise<void> {
  console.log('targets: all succeed, wall ≤ 4 s (2 s tool), peak RSS ≤ 2 GiB');
  const repeat = Math.max(1, flag('repeat', 3));
  const walls: Record<string, number[]> = { 'in-process': [], process: [] };
  for (let round = 0; round < repeat; round++) {
    for (const runtime of Object.keys(walls)) {
      const child = spawn(process.execPath, [...process.execArgv, self, '--runtime', runtime, ...process.argv.slice(2)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (text: string) => {
        output += text;
        process.stdout.write(text);
      });
      const [code] = (await once(child, 'exit')) as [number | null];
      if (code !== 0) throw new Error(`the ${runtime} capacity burst exited with ${code}`);
      const wall = /wall ([0-9.]+) s/.exec(output);
      if (wall !== null) walls[runtime].push(Number(wall[1]));
    }
  }
  for (const [runtime, seconds] of Object.entries(walls)) {
    console.log(`library, ${runtime}: median wall ${median([...seconds]).toFixed(2)} s over ${seconds.length} bursts (${seconds.map((s) => s.toFixed(2)).join(', ')})`);
  }
}

if (import.meta.main) {
  const at = process.argv.indexOf('--runtime');
  const runtime = process.argv[at + 1] === 'process' ? 'process' : 'in-process';
  await burst(runtime, flag('runs', 1_000), flag('sleep-ms', 2_000));
}

export const section: BenchSection = {
  name: 'capacity',
  description: '1,000 concurrent runs each awaiting a 2 s host tool, library API, both runtimes at default settings',
  nodeFlags: ['--max-semi-space-size=16'],
  run: benchCapacity,
};
