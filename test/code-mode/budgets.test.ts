/**
 * A run's budgets (src/code-mode/run-stats.ts): each filled near its limit, the nested calls'
 * queued and executing times by the order of events, and the bytes each value took.
 */
import { pbkdf2Sync } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import type { RunStats } from '../../src/code-mode/run-stats.ts';
import type { SandboxRuntime } from '../../src/sandbox-runtime.ts';
import { createBench, ping, sharedRuntime, textOf, until, valueOf, type Bench } from './harness.ts';

/** Times are rounded to a hundredth of a millisecond each. */
const ROUNDING_MS = 0.02;

let bench: Bench;
afterEach(() => bench.close());

/** Runs `code` and returns its result with the stats code mode reported for it. */
async function runWithStats(code: string): Promise<{ result: Awaited<ReturnType<Bench['runCode']>>; stats: RunStats }> {
  const callId = `budget-${Math.random().toString(36).slice(2)}`;
  let stats: RunStats | undefined;
  const unwatch = bench.codeMode.watchStats(callId, (heard) => (stats = heard));
  try {
    const result = await bench.runCode(code, { callId });
    expect(stats).toBeDefined();
    return { result, stats: stats! };
  } finally {
    unwatch();
  }
}

it('logs close to maxLogBytes show logBytes close to it, and the model reads the same text as without stats', async () => {
  bench = createBench({ limits: { maxLogBytes: 4096 } });
  // 40 lines of 99 characters and a newline each: 4,000 bytes.
  const { result, stats } = await runWithStats('for (let i = 0; i < 40; i++) console.log("x".repeat(99));');
  expect(valueOf(result).logs).toHaveLength(40);
  expect(stats.logBytes).toBe(4000);
  expect(stats.maxLogBytes).toBe(4096);
  expect(textOf(result)).not.toMatch(/logBytes|4096/);
});

it('a result close to maxResultBytes shows resultBytes close to it; one over it fails and still says how big it was', async () => {
  bench = createBench({ limits: { maxResultBytes: 10_000 } });
  const near = await runWithStats('return "é".repeat(4_990);');
  expect(valueOf(near.result).result).toHaveLength(4_990);
  // Two bytes a character, and the quotes.
  expect(near.stats.resultBytes).toBe(9_982);
  expect(near.stats.maxResultBytes).toBe(10_000);
  const over = await runWithStats('return "é".repeat(5_000);');
  expect(over.result.isError).toBe(true);
  expect(over.stats.resultBytes).toBe(10_002);
  const none = await runWithStats('console.log("nothing returned");');
  expect(none.stats.resultBytes).toBe(0);
});

it('a run that makes maxCalls calls shows calls = maxCalls, each call with the bytes of its value; the call past it keeps calls at the limit', async () => {
  bench = createBench({ limits: { maxCalls: 5 } });
  bench.registry.register(ping);
  const full = await runWithStats('for (let i = 0; i < 5; i++) await tools.ping({}); return "done";');
  expect(valueOf(full.result).result).toBe('done');
  expect(full.stats.calls).toBe(5);
  expect(full.stats.maxCalls).toBe(5);
  expect(full.stats.nestedCalls.map((call) => [call.callId, call.name, call.isError, call.bytes])).toEqual(
    [1, 2, 3, 4, 5].map((n) => [expect.stringMatching(new RegExp(`:ptc:${n}$`)), 'ping', false, Buffer.byteLength('"pong"')]),
  );
  const over = await runWithStats('for (;;) await tools.ping({});');
  expect(over.result.isError && over.result.error.info?.kind).toBe('call-limit');
  expect(over.stats.calls).toBe(5);
  expect(over.stats.nestedCalls).toHaveLength(5);
});

it('a heap-hungry program shows a higher heap peak than a small one, within the heap limit', async () => {
  bench = createBench({ limits: { memoryMiB: 64 } });
  const small = await runWithStats('return 1;');
  const hungry = await runWithStats('const keep = []; for (let i = 0; i < 200_000; i++) keep.push({ i, text: "row " + i }); return keep.length;');
  expect(valueOf(hungry.result).result).toBe(200_000);
  expect(small.stats.heapPeakBytes).toBeGreaterThan(0);
  expect(hungry.stats.heapPeakBytes).toBeGreaterThan(small.stats.heapPeakBytes!);
  expect(hungry.stats.heapPeakBytes).toBeLessThanOrEqual(hungry.stats.heapLimitBytes!);
  expect(hungry.stats.heapLimitBytes).toBeGreaterThanOrEqual(64 * 1024 * 1024);
});

it('with one call at a time, the second of two calls waiting together waits at least as long as the first executes', async () => {
  // Counts the calls the host received, so that the first call holds the queue until all three are in.
  const runtime = sharedRuntime();
  let received = 0;
  const counting: SandboxRuntime = {
    kind: runtime.kind,
    run: (request) => runtime.run({ ...request, callTool: (...call) => (received++, request.callTool(...call)) }),
    ready: () => runtime.ready(),
    status: () => runtime.status(),
    close: async () => undefined,
  };
  bench = createBench({ runtime: counting, limits: { maxParallelCalls: 1 } });
  const work = defineTool({
    name: 'work',
    description: 'Holds the queue until three calls are in, or works a while; answers its label.',
    parameters: { label: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
    isConcurrencySafe: () => true,
    async execute(args) {
      if (args.label === 'hold') await until(() => received === 3);
      else pbkdf2Sync('budget', 'salt', 20_000, 32, 'sha256');
      return args.label;
    },
  });
  bench.registry.register(work);
  const { result, stats } = await runWithStats('return await Promise.all(["hold", "a", "b"].map((label) => tools.work({ label })));');
  expect(valueOf(result).result).toEqual(['hold', 'a', 'b']);
  const [hold, first, second] = stats.nestedCalls;
  expect([hold, first, second].map((call) => call.callId.replace(/^.*:ptc:/, ''))).toEqual(['1', '2', '3']);
  // The hold started as it came: it waited for nothing. Both others waited behind it; the second was
  // already waiting when the first started, and started once it ended.
  expect(hold.queuedMs).toBe(0);
  expect(first.queuedMs).toBeGreaterThan(0);
  expect(second.queuedMs).toBeGreaterThan(0);
  expect(second.queuedMs).toBeGreaterThanOrEqual(first.executeMs - ROUNDING_MS);
  expect(second.queuedMs).toBeGreaterThanOrEqual(first.queuedMs - ROUNDING_MS);
  // On the run's time axis, each started once the one before it had ended.
  expect(first.startMs).toBeGreaterThanOrEqual(hold.startMs + hold.executeMs - ROUNDING_MS);
  expect(second.startMs).toBeGreaterThanOrEqual(first.startMs + first.executeMs - ROUNDING_MS);
});

it('bytes count UTF-8, failed calls count none, and a value sent in slices counts as its whole JSON', async () => {
  bench = createBench();
  const rows = Array.from({ length: 3_000 }, (_, i) => ({ id: i, name: `rø ${i}` }));
  bench.registry.register(
    defineTool({
      name: 'rows',
      description: 'Rows, plain or under a member.',
      parameters: { wrapped: { type: 'boolean', required: true } },
      output: { schema: { type: 'json' }, render: () => [{ type: 'text', text: 'rows' }] },
      isConcurrencySafe: () => true,
      async execute(args) {
        return args.wrapped ? { total: rows.length, items: rows } : rows;
      },
    }),
  );
  bench.registry.register(
    defineTool({
      name: 'fails',
      description: 'Always fails.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
      async execute(): Promise<string> {
        throw new Error('no');
      },
    }),
  );
  const { stats } = await runWithStats(`
    const plain = await tools.rows({ wrapped: false });
    const wrapped = await tools.rows({ wrapped: true });
    try { await tools.fails({}); } catch {}
    return plain.length + wrapped.items.length;`);
  expect(stats.nestedCalls.map((call) => [call.name, call.isError, call.bytes])).toEqual([
    ['rows', false, Buffer.byteLength(JSON.stringify(rows))],
    ['rows', false, Buffer.byteLength(JSON.stringify({ total: rows.length, items: rows }))],
    ['fails', true, 0],
  ]);
});

it('asTool().execute returns the stats, for a failed run too', async () => {
  bench = createBench({ limits: { maxCalls: 2 }, typings: { typings: async () => '', prompt: async () => 'prompt', check: async () => [] } });
  bench.registry.register(ping);
  const tool = await bench.codeMode.asTool();
  const failed = await tool.execute({ code: 'console.log("hi"); for (;;) await tools.ping({});', description: 'too many calls' });
  expect(failed.isError).toBe(true);
  expect(failed.stats).toMatchObject({ calls: 2, maxCalls: 2, logBytes: 3 });
  const early = await tool.execute({ code: 'return 1', description: 'bad timeout', timeoutMs: 0 });
  expect(early.error?.info?.code).toBe('INVALID_ARGS');
  expect(early.stats).toMatchObject({ calls: 0, logBytes: 0, resultBytes: 0, nestedCalls: [] });
  const refused = await tool.execute({ description: 'no code' });
  expect(refused.error?.info?.code).toBe('INVALID_ARGS');
  expect(refused.stats).toBeUndefined();
});
