/**
 * The cost of one outer dispatch of a no-op tool with a small object output:
 * snapshot + validate arguments, execute, snapshot + validate the value,
 * freeze, render, and the `tool/result` event to the in-memory sink.
 */
import { defineTool } from '../src/define-tool.ts';
import { createMemoryEventSink } from '../src/event-sinks/memory-sink.ts';
import { createToolRegistry } from '../src/registry.ts';
import { fmt, median, quantile, timeBatches, type BenchSection } from './section.ts';

const WARMUP = 30_000;
const BATCHES = 200;
const PER_BATCH = 1_000;

const noop = defineTool({
  name: 'noop',
  description: 'Does nothing and says so.',
  parameters: { path: { type: 'string', required: true }, limit: { type: 'integer' } },
  output: {
    schema: {
      type: 'object',
      properties: { ok: { type: 'boolean', required: true }, path: { type: 'string', required: true }, count: { type: 'integer', required: true } },
      additionalProperties: false,
    },
    render: (_args, value) => [{ type: 'text', text: `${value.path}: ${value.count}` }],
  },
  execute: async (args) => ({ ok: true, path: args.path, count: 3 }),
});

export const section: BenchSection = {
  name: 'dispatch',
  description: 'one outer dispatch of a no-op tool (validate args, execute, snapshot, validate, freeze, render, event to memory sink)',
  async run() {
    const sink = createMemoryEventSink();
    const registry = createToolRegistry({ eventSink: sink });
    registry.register(noop);
    const request = { name: 'noop', arguments: { path: 'src/index.ts', limit: 10 }, sessionId: 'bench' };
    const call = () => registry.dispatch(request);
    const check = await call();
    if (check.isError) throw new Error(`bench tool failed: ${check.error.message}`);
    await timeBatches(call, WARMUP / PER_BATCH, PER_BATCH, () => sink.clear());
    const { wall, cpu } = await timeBatches(call, BATCHES, PER_BATCH, () => sink.clear());
    const wallMedian = median(wall);
    const cpuMedian = median(cpu);
    console.log(`dispatch: median ${fmt(wallMedian)} µs wall per outer dispatch (p10 ${fmt(quantile(wall, 0.1))}, p90 ${fmt(quantile(wall, 0.9))})`);
    console.log(`dispatch: median ${fmt(cpuMedian)} µs CPU per outer dispatch (p10 ${fmt(quantile(cpu, 0.1))}, p90 ${fmt(quantile(cpu, 0.9))})`);
    console.log(`dispatch: best batch ${fmt(Math.min(...cpu))} µs CPU per call (the least disturbed estimate on a busy machine)`);
    console.log(`dispatch: ${BATCHES} batches × ${PER_BATCH} sequential calls after ${WARMUP} warm-up; target ≤ 5 µs`);
  },
};
