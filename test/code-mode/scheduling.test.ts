import { afterEach, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { createCodeModeCore } from '../../src/code-mode/code-mode.ts';
import { createMemoryEventSink } from '../../src/event-sinks/memory-sink.ts';
import { createToolRegistry } from '../../src/registry.ts';
import { createBench, deferred, sharedRuntime, until, valueOf, type Bench } from './harness.ts';

let bench: Bench;
afterEach(() => bench?.close());

/** A tool whose calls wait for the test to release them, recording overlap. */
function gatedTool(name: string, safe: boolean) {
  const state = { running: 0, maxRunning: 0, started: [] as number[], gates: new Map<number, () => void>() };
  const definition = defineTool({
    name,
    description: `${safe ? 'safe' : 'exclusive'} tool`,
    parameters: { i: { type: 'integer', required: true }, wait: { type: 'boolean' } },
    output: { schema: { type: 'integer' }, render: (_a, v) => [{ type: 'text', text: String(v) }] },
    isConcurrencySafe: () => safe,
    async execute(args) {
      state.running++;
      state.maxRunning = Math.max(state.maxRunning, state.running);
      state.started.push(args.i);
      if (args.wait === true) await new Promise<void>((resolve) => state.gates.set(args.i, resolve));
      else await new Promise((resolve) => setImmediate(resolve));
      state.running--;
      return args.i;
    },
  });
  return { definition, state };
}

it('Promise.all overlaps concurrency-safe calls, up to maxParallelCalls', async () => {
  bench = createBench({ limits: { maxParallelCalls: 3 } });
  const { definition, state } = gatedTool('read', true);
  bench.registry.register(definition);
  const result = await bench.runCode('return await Promise.all(Array.from({ length: 8 }, (_, i) => tools.read({ i })));');
  expect(valueOf(result).result).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  expect(state.maxRunning).toBe(3);
  expect(state.started).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
});

it('an exclusive call never overlaps anything, and later calls do not overtake it', async () => {
  bench = createBench();
  const read = gatedTool('read', true);
  const write = gatedTool('write', false);
  bench.registry.register(read.definition);
  bench.registry.register(write.definition);
  let overlapped = false;
  const unhook = bench.registry.hook('tools/execute', async (exec, next) => {
    if (exec.name === 'write' && read.state.running > 0) overlapped = true;
    if (exec.name === 'read' && write.state.running > 0) overlapped = true;
    return next();
  });
  const result = await bench.runCode(
    'return await Promise.all([tools.read({ i: 1 }), tools.read({ i: 2 }), tools.write({ i: 3 }), tools.write({ i: 4 }), tools.read({ i: 5 })]);',
  );
  unhook();
  expect(valueOf(result).result).toEqual([1, 2, 3, 4, 5]);
  expect(overlapped).toBe(false);
  expect(write.state.maxRunning).toBe(1);
  const order = bench.sink.events('s1').filter((e) => e.type === 'tool/ptc-dispatch-start').map((e) => ('arguments' in e ? e.arguments : null));
  expect(order).toEqual([{ i: 1 }, { i: 2 }, { i: 3 }, { i: 4 }, { i: 5 }]);
});

it('post-execute commits keep submission order even when later calls finish first', async () => {
  bench = createBench();
  const { definition, state } = gatedTool('read', true);
  bench.registry.register(definition);
  const commits: string[] = [];
  bench.registry.hook('tools/post-execute', (exec) => {
    commits.push(exec.callId);
    return undefined;
  });
  const run = bench.runCode('return await Promise.all([tools.read({ i: 1, wait: true }), tools.read({ i: 2, wait: true }), tools.read({ i: 3, wait: true })]);');
  await until(() => state.gates.size === 3);
  state.gates.get(3)!();
  state.gates.get(2)!();
  // Bodies 2 and 3 have finished before call 1; the commit order below shows they waited for it.
  await until(() => state.running === 1);
  state.gates.get(1)!();
  expect(valueOf(await run).result).toEqual([1, 2, 3]);
  expect(commits).toEqual(['run-1:ptc:1', 'run-1:ptc:2', 'run-1:ptc:3', 'run-1']);
  const settles = bench.sink.events('s1').filter((e) => e.type === 'tool/ptc-dispatch').map((e) => ('callId' in e ? e.callId : ''));
  expect(settles).toEqual(['run-1:ptc:1', 'run-1:ptc:2', 'run-1:ptc:3']);
});

it('two registries running the same callIds keep their own commit order', async () => {
  // Registry A's own wrapper (outside code mode's) holds its nested calls before they reach the
  // commit-order gate, while registry B runs the same callIds from start to finish.
  const hold = deferred();
  const sides = [true, false].map((held) => {
    const sink = createMemoryEventSink();
    const registry = createToolRegistry({ eventSink: sink });
    if (held) registry.hook('tools/execute', async (exec, next) => (exec.parent === undefined ? next() : hold.promise.then(next)));
    const codeMode = createCodeModeCore({ registry, runtime: sharedRuntime() });
    const tool = gatedTool('read', true);
    registry.register(tool.definition);
    const commits: string[] = [];
    registry.hook('tools/post-execute', (exec) => {
      if (exec.parent !== undefined) commits.push(exec.callId);
      return undefined;
    });
    const program = 'return await Promise.all([tools.read({ i: 1, wait: true }), tools.read({ i: 2, wait: true }), tools.read({ i: 3, wait: true })]);';
    const run = () => registry.dispatch({ name: 'run_code', arguments: { code: program, description: 'same ids' }, callId: 'run-1', sessionId: 's1' });
    return { ...tool, commits, run, codeMode };
  });
  const [a, b] = sides;
  try {
    const first = a.run();
    const second = b.run();
    await until(() => b.state.gates.size === 3);
    for (const i of [3, 2, 1]) b.state.gates.get(i)!();
    expect(valueOf(await second).result).toEqual([1, 2, 3]);
    hold.resolve();
    await until(() => a.state.gates.size === 3);
    a.state.gates.get(3)!();
    a.state.gates.get(2)!();
    await until(() => a.state.running === 1);
    a.state.gates.get(1)!();
    expect(valueOf(await first).result).toEqual([1, 2, 3]);
    expect(a.commits).toEqual(['run-1:ptc:1', 'run-1:ptc:2', 'run-1:ptc:3']);
    expect(b.commits).toEqual(['run-1:ptc:1', 'run-1:ptc:2', 'run-1:ptc:3']);
  } finally {
    for (const side of sides) await side.codeMode.close();
  }
});

it('a fan-out of big values reaches the program whole and in submission order', async () => {
  // 24 values of about 20 KB: the host hands them to the waiting program in several pieces as they
  // are ready (not in one batch at the end of its turn), while later calls still run.
  bench = createBench();
  bench.registry.register(
    defineTool({
      name: 'rows',
      description: 'rows of one page, the later pages sooner',
      parameters: { page: { type: 'integer', required: true } },
      output: { schema: { type: 'json' }, render: (_a, v) => [{ type: 'text', text: `${(v as unknown[]).length} rows` }] },
      isConcurrencySafe: () => true,
      async execute(args) {
        for (let turn = 0; turn < 24 - args.page; turn++) await new Promise((resolve) => setImmediate(resolve));
        return Array.from({ length: 200 }, (_, k) => ({ page: args.page, k, pad: 'x'.repeat(80) }));
      },
    }),
  );
  const result = await bench.runCode(`
    const settled = [];
    const pages = await Promise.all(Array.from({ length: 24 }, (_, page) => tools.rows({ page }).then((rows) => { settled.push(page); return rows; })));
    const whole = pages.every((rows, page) => rows.length === 200 && rows.every((row, k) => row.page === page && row.k === k && row.pad.length === 80 && Object.isFrozen(row)));
    return { settled, whole };`);
  expect(valueOf(result).result).toEqual({ settled: Array.from({ length: 24 }, (_, i) => i), whole: true });
});
