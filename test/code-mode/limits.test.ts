import { afterEach, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { resolveLimits, DEFAULT_CODE_MODE_LIMITS } from '../../src/code-mode/limits.ts';
import { createBench, valueOf, type Bench } from './harness.ts';

let bench: Bench;
afterEach(() => bench.close());

const ping = defineTool({
  name: 'ping',
  description: 'Answers pong.',
  parameters: {},
  output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
  isConcurrencySafe: () => true,
  async execute() {
    return 'pong';
  },
});

it('the call past maxCalls ends the run with kind call-limit, dispatching nothing more; the next run succeeds', async () => {
  bench = createBench({ limits: { maxCalls: 5 } });
  bench.registry.register(ping);
  const result = await bench.runCode('console.log("looping");\nfor (let i = 0; ; i++) await tools.ping({});');
  expect(result.isError).toBe(true);
  if (!result.isError) return;
  expect(result.error.message).toMatch(/^code run failed \(call-limit\): the program made more than 5 tool calls/);
  expect(result.error.message).toMatch(/logs:\nlooping$/);
  expect(bench.sink.events('s1').filter((e) => e.type === 'tool/ptc-dispatch-start')).toHaveLength(5);
  expect(valueOf(await bench.runCode('return await tools.ping({})')).result).toBe('pong');
});

it('the call limit also holds for one Promise.all burst', async () => {
  bench = createBench({ limits: { maxCalls: 10 } });
  bench.registry.register(ping);
  const result = await bench.runCode('await Promise.all(Array.from({ length: 50 }, () => tools.ping({})));');
  expect(result.isError && result.error.message).toMatch(/call-limit/);
  expect(bench.sink.events('s1').filter((e) => e.type === 'tool/ptc-dispatch-start').length).toBeLessThanOrEqual(10);
});

it('a run’s timeoutMs bounds its wall time (kind timeout)', async () => {
  bench = createBench();
  const result = await bench.runCode('await new Promise((resolve) => setTimeout(resolve, 60_000));', { timeoutMs: 100 });
  expect(result.isError && result.error.message).toMatch(/^code run failed \(timeout\): the program ran longer than 100 ms/);
});

it('limits have the documented defaults and refuse nonsense', () => {
  expect(resolveLimits()).toEqual({
    timeoutMs: 30_000,
    maxTimeoutMs: 600_000,
    memoryMiB: 128,
    maxLogBytes: 1_048_576,
    maxResultBytes: 16_777_216,
    maxCalls: 1_000,
    maxParallelCalls: 10,
  });
  expect(DEFAULT_CODE_MODE_LIMITS.timeoutMs).toBe(30_000);
  expect(() => resolveLimits({ maxParallelCalls: 0 })).toThrow(/maxParallelCalls must be a positive integer/);
  expect(() => resolveLimits({ timeoutMs: 700_000 })).toThrow(/must not exceed maxTimeoutMs/);
});
