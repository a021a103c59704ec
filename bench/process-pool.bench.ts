/**
 * The process runtime against the in-process floor, measured in the same
 * run: nested calls relayed over IPC, warm `return 1 + 1` latency, and
 * throughput of trivial runs at 16 concurrent callers. Both runtimes are
 * driven at the SandboxRuntime boundary with a no-op host, so the ratios
 * show the pool's own cost (a real registry adds the same to both).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxLimits, SandboxRunOutcome, SandboxRunRequest, SandboxRuntime } from '../src/sandbox-runtime.ts';
import { createInProcessRuntime } from '../sandbox/in-process-runtime.ts';
import { createProcessRuntime } from '../sandbox/process/process-runtime.ts';
import { fmt, median, quantile, type BenchSection } from './section.ts';
import type { JsonValue } from '../src/json.ts';

const limits: SandboxLimits = { timeoutMs: 60_000, memoryMiB: 128, maxLogBytes: 1 << 20, maxResultBytes: 1 << 20, maxArgBytes: 4 << 20 };
const CALLS = 1_000;
const REPEATS = 7;
const LATENCY_SAMPLES = 200;
const CALLERS = 16;
const THROUGHPUT_RUNS = 1_000;

const sequential = `for (let i = 0; i < ${CALLS}; i++) await tools.echo({ i });`;
const parallel = `await Promise.all(Array.from({ length: ${CALLS} }, (_, i) => tools.echo({ i })));`;

function request(code: string): SandboxRunRequest {
  return {
    code,
    toolNames: ['echo'],
    callTool: async (_name, argsJson) => ({ ok: true, value: JSON.parse(argsJson) as JsonValue }),
    limits,
    signal: new AbortController().signal,
  };
}

async function run(runtime: SandboxRuntime, code: string): Promise<SandboxRunOutcome> {
  const outcome = await runtime.run(request(code));
  if (!outcome.ok) throw new Error(`bench program failed (${outcome.failure.kind}): ${outcome.failure.message}`);
  return outcome;
}

/** Median µs per nested call over REPEATS runs of `code`. */
async function perCall(runtime: SandboxRuntime, code: string): Promise<number> {
  await run(runtime, code);
  const samples: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const start = performance.now();
    await run(runtime, code);
    samples.push(((performance.now() - start) * 1000) / CALLS);
  }
  return median(samples);
}

/** `return 1 + 1` latency, ms, sorted; `spacing` lets warm pools refill between samples. */
async function latency(runtime: SandboxRuntime, spacingMs: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    if (spacingMs > 0) await sleep(spacingMs);
    const start = performance.now();
    await run(runtime, 'return 1 + 1');
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b);
}

/** Trivial runs per second with CALLERS callers looping until THROUGHPUT_RUNS are done. */
async function throughput(runtime: SandboxRuntime): Promise<number> {
  let left = THROUGHPUT_RUNS;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (left-- > 0) await run(runtime, 'return 1 + 1');
    }),
  );
  return THROUGHPUT_RUNS / ((performance.now() - start) / 1000);
}

function latencyLine(label: string, sorted: number[]): string {
  return `${label}: p50 ${quantile(sorted, 0.5).toFixed(2)} ms, p99 ${quantile(sorted, 0.99).toFixed(2)} ms`;
}

export async function benchProcessPool(): Promise<void> {
  const inProcess = createInProcessRuntime();
  const pool = createProcessRuntime();
  try {
    await Promise.all([inProcess.ready(), pool.ready()]);
    const { children } = pool.status();

    const floorSeq = await perCall(inProcess, sequential);
    const poolSeq = await perCall(pool, sequential);
    const floorPar = await perCall(inProcess, parallel);
    const poolPar = await perCall(pool, parallel);
    console.log(`nested call, sequential ×${CALLS}: in-process ${fmt(floorSeq)} µs, process ${fmt(poolSeq)} µs per call → ratio ${(poolSeq / floorSeq).toFixed(2)}× (target ≤ 2.5×)`);
    console.log(`nested call, Promise.all ×${CALLS}: in-process ${fmt(floorPar)} µs, process ${fmt(poolPar)} µs per call → ratio ${(poolPar / floorPar).toFixed(2)}×`);

    console.log(latencyLine('return 1 + 1, warm (spaced 25 ms), in-process', await latency(inProcess, 25)));
    console.log(latencyLine('return 1 + 1, warm (spaced 25 ms), process', await latency(pool, 25)) + ' (target p50 ≤ 3 ms)');
    console.log(latencyLine('return 1 + 1, back to back, in-process', await latency(inProcess, 0)));
    console.log(latencyLine('return 1 + 1, back to back, process', await latency(pool, 0)));

    const inProcessRate = await throughput(inProcess);
    const poolRate = await throughput(pool);
    console.log(`throughput, ${CALLERS} callers, ${THROUGHPUT_RUNS} trivial runs: in-process ${inProcessRate.toFixed(0)} runs/s, process ${poolRate.toFixed(0)} runs/s (${children} children)`);
    console.log(`pool after the bench: ${JSON.stringify(pool.status())}`);
  } finally {
    await Promise.all([inProcess.close(), pool.close()]);
  }
}

export const section: BenchSection = {
  name: 'process-pool',
  description: 'process runtime vs the in-process floor: nested calls over IPC, warm latency, throughput at 16 callers',
  run: benchProcessPool,
};
