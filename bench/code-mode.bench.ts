/**
 * Code Mode: the cost of a nested call against a bare isolated-vm round trip
 * (the floor), `return 1 + 1` latency with a warm pool and cold, and RSS
 * growth over many runs. Prints figures; asserts nothing.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import ivm from 'isolated-vm';
import { createCodeModeCore } from '../src/code-mode/code-mode.ts';
import { defineTool } from '../src/define-tool.ts';
import { createMemoryEventSink } from '../src/event-sinks/memory-sink.ts';
import { createToolRegistry } from '../src/registry.ts';
import type { SandboxRuntime } from '../src/sandbox-runtime.ts';
import type { ToolRegistry } from '../src/tool.ts';
import { createInProcessRuntime } from '../sandbox/in-process-runtime.ts';
import { fmt, median, quantile, type BenchSection } from './section.ts';
import { echoTool } from './workloads.ts';

const CALLS = 1_000;
const ROUNDS = 7;
const LATENCY_RUNS = 200;
const RSS_RUNS = 5_000;
const RSS_WARMUP_RUNS = 1_000;

const echo = echoTool(defineTool);

/** Wall and CPU (all threads of this process) ms of something, medians over rounds. */
interface Cost {
  wall: number;
  cpu: number;
}

async function measure(action: () => Promise<unknown>): Promise<Cost> {
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  await action();
  const used = process.cpuUsage(cpuStart);
  return { wall: performance.now() - start, cpu: (used.user + used.system) / 1000 };
}

function medians(samples: Cost[]): Cost {
  return { wall: median(samples.map((s) => s.wall)), cpu: median(samples.map((s) => s.cpu)) };
}

/** Cost of 1,000 awaited host round trips in a bare isolate (sequential, then Promise.all). */
async function floor(): Promise<{ sequential: Cost; parallel: Cost }> {
  const isolate = new ivm.Isolate({ memoryLimit: 128 });
  const context = await isolate.createContext();
  await context.global.set('host', new ivm.Reference((value: number) => Promise.resolve(value)));
  const options = '{ result: { promise: true } }';
  const sequential = `(async () => { for (let i = 0; i < ${CALLS}; i++) await host.apply(undefined, [i], ${options}); })()`;
  const parallel = `(async () => { const all = []; for (let i = 0; i < ${CALLS}; i++) all.push(host.apply(undefined, [i], ${options})); await Promise.all(all); })()`;
  const time = async (code: string): Promise<Cost> => {
    const samples: Cost[] = [];
    for (let r = 0; r < ROUNDS; r++) samples.push(await measure(() => context.eval(code, { promise: true })));
    return medians(samples);
  };
  const result = { sequential: await time(sequential), parallel: await time(parallel) };
  isolate.dispose();
  return result;
}

async function runCode(registry: ToolRegistry, code: string): Promise<number> {
  return (await runCodeCost(registry, code)).wall;
}

async function runCodeCost(registry: ToolRegistry, code: string): Promise<Cost> {
  return measure(async () => {
    const result = await registry.dispatch({ name: 'run_code', arguments: { code, description: 'bench' }, sessionId: 'bench' });
    if (result.isError) throw new Error(`bench program failed: ${result.error.message}`);
  });
}


function setup(runtime: SandboxRuntime) {
  const sink = createMemoryEventSink();
  const registry = createToolRegistry({ eventSink: sink });
  registry.register(echo);
  const codeMode = createCodeModeCore({ registry, runtime, limits: { maxCalls: CALLS * 2 } });
  return { registry, sink, codeMode };
}

const PROGRAMS = {
  sequential: (n: number) => `for (let i = 0; i < ${n}; i++) await tools.echo({ i });`,
  parallel: (n: number) => `await Promise.all(Array.from({ length: ${n} }, (_, i) => tools.echo({ i })));`,
};

/** Cost of the nested calls alone: a program making them minus the same program making none. */
async function nested(registry: ToolRegistry, runtime: SandboxRuntime, clear: () => void): Promise<{ sequential: Cost; parallel: Cost }> {
  const out = { sequential: { wall: 0, cpu: 0 }, parallel: { wall: 0, cpu: 0 } };
  for (const kind of ['sequential', 'parallel'] as const) {
    const samples: Cost[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      await runtime.ready();
      const empty = await runCodeCost(registry, PROGRAMS[kind](0));
      await runtime.ready();
      const full = await runCodeCost(registry, PROGRAMS[kind](CALLS));
      clear();
      samples.push({ wall: full.wall - empty.wall, cpu: full.cpu - empty.cpu });
    }
    out[kind] = medians(samples);
  }
  return out;
}

/**
 * The sandbox's share of a nested call: the same programs run straight on the
 * runtime with a host that answers every call at once (no scheduler, dispatch
 * or events), so what is left is the stub, the wire protocol and the crossing.
 */
async function sandboxOnly(runtime: SandboxRuntime): Promise<{ sequential: Cost; parallel: Cost }> {
  const limits = { timeoutMs: 60_000, memoryMiB: 128, maxLogBytes: 1 << 20, maxResultBytes: 1 << 20, maxArgBytes: 1 << 20 };
  const run = (code: string) =>
    measure(async () => {
      const outcome = await runtime.run({
        code,
        toolNames: ['echo'],
        callTool: (_name, argsJson) => Promise.resolve({ ok: true, value: (JSON.parse(argsJson) as { i: number }).i }),
        limits,
        signal: new AbortController().signal,
      });
      if (!outcome.ok) throw new Error(`bench program failed: ${outcome.failure.message}`);
    });
  const out = { sequential: { wall: 0, cpu: 0 }, parallel: { wall: 0, cpu: 0 } };
  for (const kind of ['sequential', 'parallel'] as const) {
    const samples: Cost[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      await runtime.ready();
      const empty = await run(PROGRAMS[kind](0));
      await runtime.ready();
      const full = await run(PROGRAMS[kind](CALLS));
      samples.push({ wall: full.wall - empty.wall, cpu: full.cpu - empty.cpu });
    }
    out[kind] = medians(samples);
  }
  return out;
}

async function latency(registry: ToolRegistry, runtime: SandboxRuntime, waitForPool: boolean): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < LATENCY_RUNS; i++) {
    if (waitForPool) await runtime.ready();
    samples.push(await runCode(registry, 'return 1 + 1'));
  }
  return samples.sort((a, b) => a - b);
}

function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

export async function benchCodeMode(): Promise<void> {
  const bare = await floor();
  const warmRuntime = createInProcessRuntime({ warmPoolSize: 2 });
  const coldRuntime = createInProcessRuntime({ warmPoolSize: 0 });
  const warm = setup(warmRuntime);
  const cold = setup(coldRuntime);
  try {
    await warmRuntime.ready();
    for (let i = 0; i < 20; i++) await runCode(warm.registry, 'return 1 + 1');
    const ours = await nested(warm.registry, warmRuntime, () => warm.sink.clear());
    const sandbox = await sandboxOnly(warmRuntime);
    const perCall = (ms: number): string => fmt((ms / CALLS) * 1000);
    for (const kind of ['sequential', 'parallel'] as const) {
      const target = kind === 'sequential' ? 1.3 : 1.5;
      const label = kind === 'sequential' ? 'sequential' : `Promise.all ×${CALLS}`;
      console.log(
        `code-mode: ${label}: floor (bare isolated-vm async round trip) ${perCall(bare[kind].wall)} µs/call wall, ${perCall(bare[kind].cpu)} µs CPU; ` +
          `nested call (validate, dispatch, freeze, events) ${perCall(ours[kind].wall)} µs wall, ${perCall(ours[kind].cpu)} µs CPU → ` +
          `ratio ${(ours[kind].wall / bare[kind].wall).toFixed(2)} wall, ${(ours[kind].cpu / bare[kind].cpu).toFixed(2)} CPU (target ≤ ${target})`,
      );
      console.log(
        `code-mode: ${label}: of which the sandbox alone (stub, wire protocol, crossing; a host answering at once, no dispatch) ` +
          `${perCall(sandbox[kind].wall)} µs wall, ${perCall(sandbox[kind].cpu)} µs CPU → ratio ${(sandbox[kind].wall / bare[kind].wall).toFixed(2)} wall`,
      );
    }

    const warmSamples = await latency(warm.registry, warmRuntime, true);
    const coldSamples = await latency(cold.registry, coldRuntime, false);
    console.log(`code-mode: 'return 1 + 1' warm pool p50 ${quantile(warmSamples, 0.5).toFixed(2)} ms, p99 ${quantile(warmSamples, 0.99).toFixed(2)} ms (target p50 ≤ 2 ms)`);
    console.log(`code-mode: 'return 1 + 1' cold isolate p50 ${quantile(coldSamples, 0.5).toFixed(2)} ms, p99 ${quantile(coldSamples, 0.99).toFixed(2)} ms`);

    // Growth is measured from a steady state: the first runs fill allocator
    // pools and JIT caches once, and memory other sections left behind is
    // returned meanwhile; neither is growth per run.
    const program = 'const rows = Array.from({ length: 100 }, (_, i) => ({ i })); return rows.length;';
    for (let i = 0; i < RSS_WARMUP_RUNS; i++) await runCode(warm.registry, program);
    warm.sink.clear();
    collectGarbage();
    const before = process.memoryUsage().rss;
    const started = performance.now();
    for (let i = 0; i < RSS_RUNS; i++) {
      await runCode(warm.registry, program);
      if (i % 500 === 499) warm.sink.clear();
    }
    const seconds = (performance.now() - started) / 1000;
    collectGarbage();
    const after = process.memoryUsage().rss;
    console.log(
      `code-mode: RSS ${(before / 2 ** 20).toFixed(0)} MiB before, ${(after / 2 ** 20).toFixed(0)} MiB after ${RSS_RUNS} more runs (after ${RSS_WARMUP_RUNS} warm-up runs; ${(((after - before) / before) * 100).toFixed(1)} % growth, target ≤ 10 %; ${(RSS_RUNS / seconds).toFixed(0)} runs/s back to back)`,
    );
  } finally {
    await warm.codeMode.close();
    await cold.codeMode.close();
    await warmRuntime.close();
    await coldRuntime.close();
  }
}

export const section: BenchSection = {
  name: 'code-mode',
  // What `ptc` runs with: V8 would otherwise grow the young generation to 128 MiB over the RSS runs (docs/service.md).
  nodeFlags: ['--max-semi-space-size=16'],
  description: 'run_code: nested call vs bare isolated-vm round trip, return 1 + 1 latency warm/cold, RSS over 5,000 runs',
  run: benchCodeMode,
};
