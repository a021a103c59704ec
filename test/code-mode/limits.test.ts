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

/** Records what reached its body; answers with the length of `data`. */
function takeTool() {
  const received: string[] = [];
  const definition = defineTool({
    name: 'take',
    description: 'Takes data, answers its length.',
    parameters: { data: { type: 'string', required: true } },
    output: { schema: { type: 'integer' }, render: (_a, v) => [{ type: 'text', text: String(v) }] },
    async execute(args) {
      received.push(args.data);
      return args.data.length;
    },
  });
  return { definition, received };
}

const CATCH_BIG_THEN_SMALL = (big: string) => `
  let refused;
  try {
    await tools.take({ data: ${big} });
  } catch (e) {
    if (!(e instanceof ToolCallError)) throw e;
    refused = { code: e.code, callId: e.callId, message: e.message };
  }
  const small = await tools.take({ data: 'ok' });
  return { refused, small };`;

// The catalogue of the argument-size refusal (other tests check its code): the isolate refuses
// by characters before submitting; the host counts UTF-8 bytes
// ('é' is 611 characters of JSON but 1,211 bytes). Neither refusal takes a call number.
it.each([
  { who: 'the isolate', big: "'x'.repeat(2_000)", message: 'tool arguments are 2011 characters of JSON' },
  { who: 'the host', big: "'é'.repeat(600)", message: 'tool arguments are 1211 bytes of JSON' },
])('an argument past maxArgBytes is refused by $who with a catchable INVALID_ARGS, dispatching nothing; the next call succeeds', async ({ big, message }) => {
  bench = createBench({ limits: { maxArgBytes: 1_000 } });
  const { definition, received } = takeTool();
  bench.registry.register(definition);
  const { result } = valueOf(await bench.runCode(CATCH_BIG_THEN_SMALL(big)));
  expect(result).toEqual({
    refused: {
      code: 'INVALID_ARGS',
      callId: '',
      message: `${message}, over the 1000-byte limit for one call: pass less per call (split the data over several calls)`,
    },
    small: 2,
  });
  expect(received).toEqual(['ok']);
  const nested = bench.sink.events('s1').filter((e) => e.type === 'tool/ptc-dispatch-start' || e.type === 'tool/ptc-dispatch');
  expect(nested.map((e) => [e.type, 'callId' in e ? e.callId : undefined])).toEqual([
    ['tool/ptc-dispatch-start', 'run-1:ptc:1'],
    ['tool/ptc-dispatch', 'run-1:ptc:1'],
  ]);
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
    maxArgBytes: 4_194_304,
    maxRenderedBytes: 1_048_576,
    maxCalls: 1_000,
    maxParallelCalls: 10,
    maxJournalValueBytes: 1024 * 1024,
  });
  expect(DEFAULT_CODE_MODE_LIMITS.timeoutMs).toBe(30_000);
  expect(() => resolveLimits({ maxParallelCalls: 0 })).toThrow('invalid code mode limits: limits.maxParallelCalls: must be >= 1');
  expect(() => resolveLimits({ maxArgBytes: 1.5, memoryMiB: 4 })).toThrow('invalid code mode limits: limits.memoryMiB: must be >= 8; limits.maxArgBytes: must be integer');
  expect(() => resolveLimits({ timeoutMs: 700_000 })).toThrow('limits.timeoutMs (700000) must not exceed limits.maxTimeoutMs (600000)');
});
