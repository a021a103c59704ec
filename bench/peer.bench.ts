/**
 * Side by side, in one process and one run: this project (library,
 * in-process runtime, tools concurrency-safe, no event sink), the nearest
 * peer (`@utcp/code-mode`, a dev-only bench dependency, on our isolated-vm)
 * and raw isolated-vm floors that pass JSON strings across. The same
 * workloads with the same shapes for all three; the rounds interleave the
 * three so machine noise falls on each alike. Prints medians, ranges and
 * ratios; asserts nothing.
 *
 * The peer's tools are in-memory functions put in place of its UTCP
 * repository (`getTools`, `callTool`): what is timed is its executor, not its
 * manual plumbing, so the comparison is, if anything, kind to it.
 *
 * Its tool calls are synchronous in the guest (`applySyncPromise`), so its
 * `Promise.all` runs the calls one after another.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import ivm from 'isolated-vm';
import { CodeModeUtcpClient } from '@utcp/code-mode';
import { createCodeModeCore } from '../src/code-mode/code-mode.ts';
import { defineTool } from '../src/define-tool.ts';
import { createToolRegistry } from '../src/registry.ts';
import type { ToolRegistry } from '../src/tool.ts';
import { createInProcessRuntime } from '../sandbox/in-process-runtime.ts';
import { median, type BenchSection } from './section.ts';
import { BIG, dataTools, PAGES, SUM_OF_PAGES } from './workloads.ts';

// ---- the tools, in-memory and I/O-bound ----

type Impl = (args: Record<string, unknown>) => unknown;
const IMPLS: Record<string, Impl> = {
  big: () => BIG,
  page: (args) => PAGES[Number(args.page)],
  echo: (args) => args.i,
  io1: async (args) => {
    await sleep(1);
    return args.i;
  },
  io10: async (args) => {
    await sleep(10);
    return args.i;
  },
};

// ---- workloads: one program shape, spelt for each executor ----

interface Workload {
  name: string;
  /** `t` is how a tool is reached: `tools.` for us, `` for the peer (globals), `tools.` for the raw floor. */
  program(t: string): string;
  /** Runs per column, interleaved. The two data-volume rows take more: their spread on this shared machine is wide. */
  rounds: number;
  /** Runs at once; the figure is then runs/s over `rounds` batches. */
  concurrent?: number;
  /** Prints where a run's CPU goes (this process's main thread, its other threads) besides its time. */
  cpu?: boolean;
  /** Checks the run's result (a bench that measures a failing run measures nothing). */
  expect: unknown;
}

const WORKLOADS: Workload[] = [
  { name: 'trivial return 1 + 1', program: () => 'return 1 + 1;', rounds: 31, expect: 2 },
  { name: 'tool returning 1 MB (10,000 objects)', program: (t) => `const rows = await ${t}big({}); return rows.length;`, rounds: 41, cpu: true, expect: 10_000 },
  {
    name: '50 pages of 100, reduced in the sandbox',
    program: (t) =>
      `const pages = await Promise.all(Array.from({ length: 50 }, (_, p) => ${t}page({ page: p })));\n` +
      'let sum = 0; for (const rows of pages) for (const row of rows) if (row.active) sum += row.score; return sum;',
    rounds: 41,
    cpu: true,
    expect: SUM_OF_PAGES,
  },
  { name: '100 sequential calls', program: (t) => `let s = 0; for (let i = 0; i < 100; i++) s += await ${t}echo({ i }); return s;`, rounds: 21, expect: 4950 },
  {
    name: '1,000 calls in Promise.all',
    program: (t) => `const all = await Promise.all(Array.from({ length: 1000 }, (_, i) => ${t}echo({ i }))); return all.length;`,
    rounds: 15,
    expect: 1000,
  },
  {
    name: 'throughput: 100 sequential calls, 8 runs at once (runs/s)',
    program: (t) => `let s = 0; for (let i = 0; i < 100; i++) s += await ${t}echo({ i }); return s;`,
    rounds: 7,
    concurrent: 8,
    cpu: true,
    expect: 4950,
  },
  // The budget for I/O-bound tools is 2 %, within which 21 rounds' medians varied from run to run: more rounds.
  { name: 'I/O tool 1 ms, 20 sequential calls', program: (t) => `let s = 0; for (let i = 0; i < 20; i++) s += await ${t}io1({ i }); return s;`, rounds: 61, expect: 190 },
  { name: 'I/O tool 10 ms, 10 sequential calls', program: (t) => `let s = 0; for (let i = 0; i < 10; i++) s += await ${t}io10({ i }); return s;`, rounds: 31, expect: 45 },
];

/** Runs one program; resolves to its result. */
type Executor = (program: string) => Promise<unknown>;

// ---- ours ----

const summary = (_args: unknown, value: unknown) => [{ type: 'text' as const, text: JSON.stringify(value).slice(0, 200) }];

function ourRegistry(): ToolRegistry {
  const registry = createToolRegistry();
  for (const tool of dataTools(defineTool)) registry.register(tool);
  for (const name of ['echo', 'io1', 'io10'] as const) {
    registry.register(
      defineTool({
        name,
        description: 'Returns its argument.',
        parameters: { i: { type: 'integer', required: true } },
        output: { schema: { type: 'integer' }, render: summary },
        isConcurrencySafe: () => true,
        execute: async (args) => (await IMPLS[name](args)) as number,
      }),
    );
  }
  return registry;
}

// ---- the peer ----

async function peerClient(): Promise<CodeModeUtcpClient> {
  const client = await CodeModeUtcpClient.create();
  const tools = Object.keys(IMPLS).map((name) => ({
    name,
    description: name,
    inputs: { type: 'object', properties: {} },
    outputs: { type: 'object', properties: {} },
    tags: [],
    tool_call_template: { call_template_type: 'direct', name },
  }));
  const replaced = client as unknown as { getTools(): Promise<unknown[]>; callTool(name: string, args: Record<string, unknown>): Promise<unknown> };
  replaced.getTools = async () => tools;
  replaced.callTool = async (name, args) => IMPLS[name](args);
  return client;
}

// ---- the raw floor: a fresh isolate (made before the clock starts), one async host function, JSON strings ----

const RAW_GUEST = `
const call = (name, args) => host.apply(undefined, [name, JSON.stringify(args)], { result: { promise: true } }).then(JSON.parse);
globalThis.tools = new Proxy({}, { get: (_t, name) => (args) => call(name, args) });
`;

async function rawIsolate(): Promise<{ isolate: ivm.Isolate; context: ivm.Context }> {
  const isolate = new ivm.Isolate({ memoryLimit: 128 });
  const context = isolate.createContextSync();
  context.global.setSync(
    'host',
    new ivm.Reference(async (name: string, argsJson: string) => JSON.stringify(await IMPLS[name](JSON.parse(argsJson) as Record<string, unknown>))),
  );
  context.evalSync(RAW_GUEST);
  return { isolate, context };
}

// ---- timing ----

interface Figures {
  samples: number[];
  /** CPU per run of this process's main thread, and of all its threads, ms (printed for workloads marked `cpu`). */
  mainCpu: number[];
  allCpu: number[];
}

/** Numbers each run's program: a model writes a new program each time, so no executor may find it compiled already. */
let programSeq = 0;
const unique = (program: string): string => `/* run ${++programSeq} */ ${program}`;

async function timeOne(executor: Executor, workload: Workload, program: string, figures: Figures): Promise<number> {
  const check = (result: unknown): void => {
    if (result !== workload.expect) throw new Error(`bench: ${workload.name} returned ${JSON.stringify(result)}, expected ${JSON.stringify(workload.expect)}`);
  };
  if (workload.concurrent === undefined) {
    const code = unique(program);
    const main = process.threadCpuUsage();
    const all = process.cpuUsage();
    const start = performance.now();
    check(await executor(code));
    const ms = performance.now() - start;
    const mainUsed = process.threadCpuUsage(main);
    const allUsed = process.cpuUsage(all);
    figures.mainCpu.push((mainUsed.user + mainUsed.system) / 1000);
    figures.allCpu.push((allUsed.user + allUsed.system) / 1000);
    return ms;
  }
  const runs = workload.concurrent * 4;
  let next = 0;
  const start = performance.now();
  const main = process.threadCpuUsage();
  const all = process.cpuUsage();
  await Promise.all(
    Array.from({ length: workload.concurrent }, async () => {
      while (next++ < runs) check(await executor(unique(program)));
    }),
  );
  const runsPerSecond = runs / ((performance.now() - start) / 1000);
  const mainUsed = process.threadCpuUsage(main);
  const allUsed = process.cpuUsage(all);
  figures.mainCpu.push((mainUsed.user + mainUsed.system) / 1000 / runs);
  figures.allCpu.push((allUsed.user + allUsed.system) / 1000 / runs);
  return runsPerSecond;
}

function range(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.round(p * (sorted.length - 1))];
  return `${median([...samples]).toFixed(2)} (${q(0.25).toFixed(2)}–${q(0.75).toFixed(2)})`;
}

/**
 * Our executor on its own in-process runtime, all runs in one session; `syncToolCalls: false`
 * measures the asynchronous crossing alone, `sessionIsolates: 0` a fresh isolate for every run.
 */
function ourExecutor(options: { syncToolCalls?: boolean; sessionIsolates?: number }): { executor: Executor; ready(): Promise<void>; close(): Promise<void> } {
  const runtime = createInProcessRuntime({ warmPoolSize: 2, ...options });
  const registry = ourRegistry();
  const codeMode = createCodeModeCore({ registry, runtime, limits: { maxCalls: 5_000 } });
  return {
    executor: async (code) => {
      const result = await registry.dispatch({ name: 'run_code', arguments: { code, description: 'bench' }, sessionId: 'bench' });
      if (result.isError) throw new Error(`bench: our run failed: ${result.error.message}`);
      return (result.value as { result?: unknown }).result;
    },
    ready: () => runtime.ready(),
    close: async () => {
      await codeMode.close();
      await runtime.close();
    },
  };
}

const COLUMNS = ['ours', 'async', 'fresh', 'utcp', 'raw'] as const;
type Column = (typeof COLUMNS)[number];

export async function benchPeer(): Promise<void> {
  const setups = { ours: ourExecutor({}), async: ourExecutor({ syncToolCalls: false }), fresh: ourExecutor({ sessionIsolates: 0 }) };
  const ourColumns = ['ours', 'async', 'fresh'] as const;
  const peer = await peerClient();
  // Before each timed run: our warm pools refilled, so no refill of one runtime is timed in another column.
  const settled = async (): Promise<void> => {
    for (const column of ourColumns) await setups[column].ready();
  };

  const theirs: Executor = async (code) => {
    const { result, logs } = await peer.callToolChain(code, 60_000, 128);
    if (logs.some((line) => line.startsWith('[ERROR]'))) throw new Error(`bench: peer run failed: ${logs.join('\n')}`);
    return result;
  };
  // The floor's isolates are made ahead, outside the clock, like our warm pool's.
  let spare = await rawIsolate();
  const raw: Executor = async (code) => {
    const { isolate, context } = spare;
    try {
      return await context.eval(`(async () => { ${code} })()`, { promise: true, copy: true });
    } finally {
      isolate.dispose();
    }
  };

  try {
    // Warm the JIT of every path once.
    for (const workload of WORKLOADS.slice(0, 5)) {
      for (const column of ourColumns) await setups[column].executor(workload.program('tools.'));
      await theirs(workload.program(''));
      spare = await rawIsolate();
      await raw(workload.program('tools.'));
    }
    console.log(
      'peer: median ms per run (interquartile range); throughput in runs/s. ours = ptc-executor (defaults: the runs of a session reuse its isolate, each in a fresh context), ' +
        'async = ours with the asynchronous crossing only (syncToolCalls: false), fresh = ours with a fresh isolate for every run (sessionIsolates: 0), ' +
        'utcp = @utcp/code-mode 1.2.12, raw = isolated-vm + JSON strings; every run\'s program is new (numbered), as a model\'s would be',
    );
    for (const workload of WORKLOADS) {
      const figures = Object.fromEntries(COLUMNS.map((column): [Column, Figures] => [column, { samples: [], mainCpu: [], allCpu: [] }])) as Record<Column, Figures>;
      for (let r = 0; r < workload.rounds; r++) {
        // Our columns take turns going first: the first run after a pause is the slower one.
        for (let c = 0; c < ourColumns.length; c++) {
          const column = ourColumns[(c + r) % ourColumns.length];
          await settled();
          figures[column].samples.push(await timeOne(setups[column].executor, workload, workload.program('tools.'), figures[column]));
        }
        await settled();
        figures.utcp.samples.push(await timeOne(theirs, workload, workload.program(''), figures.utcp));
        await settled();
        if (workload.concurrent === undefined) {
          spare = await rawIsolate();
          figures.raw.samples.push(await timeOne(raw, workload, workload.program('tools.'), figures.raw));
        } else {
          // Each of the concurrent runs needs its own isolate: made on demand (inside the clock), as the peer does.
          const rawFresh: Executor = async (code) => {
            const own = await rawIsolate();
            try {
              return await own.context.eval(`(async () => { ${code} })()`, { promise: true, copy: true });
            } finally {
              own.isolate.dispose();
            }
          };
          figures.raw.samples.push(await timeOne(rawFresh, workload, workload.program('tools.'), figures.raw));
        }
      }
      const m = (k: Column) => median([...figures[k].samples]);
      const throughput = workload.concurrent !== undefined;
      // For throughput higher is better: the ratios are then theirs / ours, so < 1 still means ours is ahead.
      const ratio = (k: Column, of: Column = 'ours') => (throughput ? m(k) / m(of) : m(of) / m(k)).toFixed(2);
      console.log(
        `peer: ${workload.name}: ${COLUMNS.map((k) => `${k} ${range(figures[k].samples)}`).join(', ')}; ` +
          `${throughput ? 'cost ratio (their runs/s over ours)' : 'ratio'} ours/utcp ${ratio('utcp')}, ours/raw ${ratio('raw')}, ours/async ${ratio('async')}, ` +
          `fresh/ours ${ratio('ours', 'fresh')}, fresh/utcp ${ratio('utcp', 'fresh')}`,
      );
      if (workload.cpu === true) {
        // Where a run's CPU goes: this process's main thread (host: tools, dispatch, isolate set-up) and the rest
        // (isolated-vm's threads running the programs, V8's helpers).
        const cpu = (k: Column) => {
          const mainMs = median([...figures[k].mainCpu]);
          return `${k} ${median([...figures[k].allCpu]).toFixed(2)} (main ${mainMs.toFixed(2)}, other ${(median([...figures[k].allCpu]) - mainMs).toFixed(2)})`;
        };
        console.log(`peer: ${workload.name}, CPU ms per run (main thread, other threads): ${COLUMNS.map(cpu).join(', ')}`);
      }
    }
  } finally {
    if (!spare.isolate.isDisposed) spare.isolate.dispose();
    for (const column of ourColumns) await setups[column].close();
  }
}

export const section: BenchSection = {
  name: 'peer',
  nodeFlags: ['--max-semi-space-size=16'],
  description: 'ours (also on the asynchronous crossing alone, and with a fresh isolate for every run) vs @utcp/code-mode vs raw isolated-vm (JSON strings): 1 MB result, 50 pages reduced, 100 sequential, 1,000 in Promise.all, 8 at once, I/O tools',
  run: benchPeer,
};
