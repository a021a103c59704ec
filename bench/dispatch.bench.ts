/**
 * The cost of one outer dispatch of a no-op tool with a small object output:
 * snapshot + validate arguments, execute, snapshot + validate the value,
 * freeze, render, and the `tool/result` event to the in-memory sink.
 */
import { createMemoryEventSink } from '../src/event-sinks/memory-sink.ts';
import { createToolRegistry } from '../src/registry.ts';
import type { ToolDefinition } from '../src/tool.ts';
import { fmt, median, quantile, timeBatches, type BenchSection } from './section.ts';

const WARMUP = 30_000;
const BATCHES = 200;
const PER_BATCH = 1_000;

/** What `defineTool` builds for this spec: arguments validated, object output rendered as text. */
const noop: ToolDefinition<any, any> = {
  name: 'noop',
  description: 'Does nothing and says so.',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' }, limit: { type: 'integer' } },
    required: ['path'],
  },
  validateArguments: true,
  output: {
    schema: {
      type: 'object',
      properties: { ok: { type: 'boolean' }, path: { type: 'string' }, count: { type: 'integer' } },
      required: ['ok', 'path', 'count'],
      additionalProperties: false,
    },
    render: (_args: unknown, value: { path: string; count: number }) => [{ type: 'text', text: `${value.path}: ${value.count}` }],
  },
  execute: async (args: { path: string }) => ({ ok: true, path: args.path, count: 3 }),
};

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
