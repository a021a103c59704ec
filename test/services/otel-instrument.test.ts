import { hasSubscribers } from 'node:diagnostics_channel';
import { context, ROOT_CONTEXT, trace, type Context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import type { TypingsService } from '../../src/code-mode/typings-service.ts';
import { NESTED_CALL_CHANNEL, RUN_CHANNEL, TOOL_SOURCE_CHANNEL, TYPECHECK_CHANNEL, nestedCallChannel, runChannel, toolSourceChannel, typecheckChannel, type NestedCallMessage, type TraceContext } from '../../src/tracing.ts';
import { instrument } from '../../services/otel-instrument.ts';
import type { SandboxRuntime } from '../../src/sandbox-runtime.ts';
import { createBench, ping, valueOf, type Bench } from '../code-mode/harness.ts';

/** Records the order spans start and end in (names), next to the exporter's finished spans. */
class OrderRecorder implements SpanProcessor {
  readonly order: string[] = [];
  onStart(span: Span, _parent: Context): void {
    this.order.push(`start ${span.name} ${String(span.attributes['gen_ai.tool.call.id'] ?? '')}`);
  }
  onEnd(span: ReadableSpan): void {
    this.order.push(`end ${span.name} ${String(span.attributes['gen_ai.tool.call.id'] ?? '')}`);
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

function tracing() {
  const exporter = new InMemorySpanExporter();
  const order = new OrderRecorder();
  const provider = new TracerProvider({ spanProcessors: [order, new SimpleSpanProcessor({ exporter })] });
  const uninstall = instrument({ tracerProvider: provider });
  return { exporter, order, provider, uninstall };
}

/** A concurrency-safe tool whose calls all wait until `count` of them are running: they overlap by construction. */
function barrierTool(count: number) {
  let running = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return defineTool({
    name: 'slow',
    description: 'waits for its siblings',
    parameters: { i: { type: 'integer', required: true } },
    output: { schema: { type: 'integer' }, render: (_a, v) => [{ type: 'text', text: String(v) }] },
    isConcurrencySafe: () => true,
    async execute(args) {
      if (++running === count) release();
      await all;
      return args.i * 10;
    },
  });
}

/** The global context manager for this test: what a host with HTTP instrumentation has. */
function useContextManager(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  onTestFinished(() => void context.disable());
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const spanNamed = (spans: ReadableSpan[], name: string) => spans.find((span) => span.name === name)!;

let bench: Bench | undefined;
let uninstall: (() => void) | undefined;
afterEach(async () => {
  uninstall?.();
  uninstall = undefined;
  await bench?.close();
  bench = undefined;
});

describe('instrument()', () => {
  it('makes one run span and three overlapping call spans under it for a Promise.all of three calls', async () => {
    const t = tracing();
    uninstall = t.uninstall;
    bench = createBench();
    bench.registry.register(barrierTool(3));
    const result = await bench.runCode('return await Promise.all([1, 2, 3].map((i) => tools.slow({ i })))');
    expect(valueOf(result).result).toEqual([10, 20, 30]);

    const spans = t.exporter.getFinishedSpans();
    const runs = spans.filter((span) => span.name === 'execute_tool run_code');
    expect(runs).toHaveLength(1);
    const run = runs[0];
    expect(run.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.call.id': 'run-1', 'session.id': 's1', 'ptc.calls': 3 });
    expect(parentOf(run)).toBeUndefined();

    const calls = spans.filter((span) => span.name === 'execute_tool slow');
    expect(calls.map((span) => span.attributes['gen_ai.tool.call.id']).sort()).toEqual(['run-1:ptc:1', 'run-1:ptc:2', 'run-1:ptc:3']);
    for (const call of calls) {
      expect(parentOf(call)).toBe(run.spanContext().spanId);
      expect(call.spanContext().traceId).toBe(run.spanContext().traceId);
      expect(call.attributes).toMatchObject({ 'gen_ai.tool.name': 'slow', 'ptc.is_error': false, 'ptc.bytes_in': 7, 'ptc.bytes_out': 2 });
      // Each call's phases are its children.
      const phases = spans.filter((span) => parentOf(span) === call.spanContext().spanId).map((span) => span.name);
      expect(phases).toContain('ptc.execute');
      expect(phases).toContain('ptc.post_execute');
    }
    // Overlap: every call started before any call ended; the run ended after all of them.
    const callEvents = t.order.order.filter((line) => line.includes('execute_tool slow'));
    expect(callEvents.slice(0, 3).every((line) => line.startsWith('start'))).toBe(true);
    expect(callEvents.slice(3).every((line) => line.startsWith('end'))).toBe(true);
    expect(t.order.order.indexOf('end execute_tool run_code run-1')).toBeGreaterThan(t.order.order.lastIndexOf(callEvents[5]));
  });

  it('shows a call that waited for its turn as a queued phase, and a failed call with its code', async () => {
    const t = tracing();
    uninstall = t.uninstall;
    // The first call runs until the second is submitted, so the second must wait for its turn.
    let secondSubmitted!: () => void;
    const submitted = new Promise<void>((resolve) => (secondSubmitted = resolve));
    const watch = (message: unknown): void => {
      if ((message as NestedCallMessage).phase === 'call' && (message as NestedCallMessage).callId === 'run-1:ptc:2') secondSubmitted();
    };
    nestedCallChannel.start.subscribe(watch);
    onTestFinished(() => void nestedCallChannel.start.unsubscribe(watch));
    bench = createBench({ limits: { maxParallelCalls: 1 } });
    bench.registry.register(
      defineTool({
        name: 'slow',
        description: 'the first call waits for the second to be submitted',
        parameters: { i: { type: 'integer', required: true } },
        output: { schema: { type: 'integer' }, render: () => [] },
        isConcurrencySafe: () => true,
        async execute(args) {
          if (args.i === 1) await submitted;
          return args.i;
        },
      }),
    );
    bench.registry.register(
      defineTool({
        name: 'broken',
        description: 'always fails',
        parameters: {},
        output: { schema: { type: 'integer' }, render: () => [] },
        isConcurrencySafe: () => true,
        execute() {
          throw new Error('nope');
        },
      }),
    );
    const result = await bench.runCode('await Promise.all([tools.slow({ i: 1 }), tools.slow({ i: 2 })]); try { await tools.broken({}) } catch {} return 1');
    expect(valueOf(result).result).toBe(1);
    const spans = t.exporter.getFinishedSpans();
    const second = spans.find((span) => span.attributes['gen_ai.tool.call.id'] === 'run-1:ptc:2' && span.name === 'execute_tool slow')!;
    const queued = spans.filter((span) => span.name === 'ptc.queued');
    expect(queued.map(parentOf)).toEqual([second.spanContext().spanId]);
    const broken = spans.find((span) => span.name === 'execute_tool broken')!;
    expect(broken.attributes).toMatchObject({ 'ptc.is_error': true, 'error.type': 'TOOL_FAILED' });
    expect(broken.status.code).toBe(2);
  });

  it('parents the run to the traceparent it was dispatched with, and marks a failed run', async () => {
    const t = tracing();
    uninstall = t.uninstall;
    bench = createBench();
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const result = await bench.runCode('throw new Error("boom")', { trace: { traceparent, tenant: 'acme' } });
    expect(result.isError).toBe(true);
    const [run] = t.exporter.getFinishedSpans().filter((span) => span.name === 'execute_tool run_code');
    expect(run.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(parentOf(run)).toBe('b7ad6b7169203331');
    expect(run.attributes).toMatchObject({ 'ptc.tenant': 'acme', 'error.type': 'CODE_RUN_FAILED' });
  });

  it('ends the spans of a call the run abandoned in the queue', async () => {
    const t = tracing();
    uninstall = t.uninstall;
    bench = createBench({ limits: { maxParallelCalls: 1 } });
    bench.registry.register(
      defineTool({
        name: 'hang',
        description: 'waits until cancelled',
        parameters: {},
        output: { schema: { type: 'integer' }, render: () => [] },
        isConcurrencySafe: () => true,
        execute: (_args, exec) => new Promise<number>((_resolve, reject) => exec.signal.addEventListener('abort', () => reject(exec.signal.reason))),
      }),
    );
    const result = await bench.runCode('void tools.hang({}); void tools.hang({}); await new Promise((r) => setTimeout(r, 0)); throw new Error("done")');
    expect(result.isError).toBe(true);
    const spans = t.exporter.getFinishedSpans();
    const second = spans.find((span) => span.name === 'execute_tool hang' && span.attributes['gen_ai.tool.call.id'] === 'run-1:ptc:2')!;
    expect(second.attributes['error.type']).toBe('ABORTED_BEFORE_DISPATCH');
    expect(spans.filter((span) => span.name === 'ptc.queued').map(parentOf)).toEqual([second.spanContext().spanId]);
    expect(spans.filter((span) => span.name === 'execute_tool hang')).toHaveLength(2);
  });

  it('counts a big value, sent to the program a part at a time, at the bytes the program got', async () => {
    const t = tracing();
    uninstall = t.uninstall;
    bench = createBench();
    const rows = Array.from({ length: 5_000 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ['é', i % 2 === 0 ? 'even' : 'odd'] }));
    bench.registry.register(
      defineTool({
        name: 'rows',
        description: 'returns many rows',
        parameters: {},
        output: { schema: { type: 'json' }, render: () => [] },
        isConcurrencySafe: () => true,
        execute: async () => rows,
      }),
    );
    expect(valueOf(await bench.runCode('const all = await tools.rows({}); return all.length + all[4999].id')).result).toBe(9_999);
    const spans = t.exporter.getFinishedSpans();
    expect(spanNamed(spans, 'execute_tool rows').attributes).toMatchObject({ 'ptc.is_error': false, 'ptc.bytes_out': Buffer.byteLength(JSON.stringify(rows)) });
    expect(t.order.order.indexOf('end execute_tool rows run-1:ptc:1')).toBeLessThan(t.order.order.indexOf('end execute_tool run_code run-1'));
  });

  it('ends a call whose value the sandbox never reported delivered when its run ends, inside the run', async () => {
    const t = tracing();
    uninstall = t.uninstall;
    // A runtime of someone else's that takes the value and never calls onDelivered.
    const runtime: SandboxRuntime = {
      kind: 'silent',
      async run(request) {
        const outcome = await request.callTool('ping', '{}');
        return { ok: true, logs: [], resultJson: JSON.stringify(outcome.ok) };
      },
      ready: async () => undefined,
      status: () => ({ children: 0, busy: 0, queued: 0, restarts: 0 }),
      close: async () => undefined,
    };
    bench = createBench({ runtime });
    bench.registry.register(ping);
    expect(valueOf(await bench.runCode('return await tools.ping({})')).result).toBe(true);
    const spans = t.exporter.getFinishedSpans();
    const call = spanNamed(spans, 'execute_tool ping');
    expect(call.attributes['ptc.is_error']).toBe(false);
    expect(call.attributes['ptc.bytes_out']).toBeUndefined();
    expect(t.order.order.indexOf('end execute_tool ping run-1:ptc:1')).toBeLessThan(t.order.order.indexOf('end execute_tool run_code run-1'));
  });

  it('prefers an active span that already continues the incoming trace (a server span) to the traceparent', async () => {
    const t = tracing();
    uninstall = t.uninstall;
    useContextManager();
    bench = createBench();
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const server = t.provider.getTracer('test').startSpan('POST /v1/run', {}, trace.setSpanContext(ROOT_CONTEXT, { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true }));
    await context.with(trace.setSpan(ROOT_CONTEXT, server), () => bench!.runCode('return 1', { trace: { traceparent } }));
    server.end();
    const run = spanNamed(t.exporter.getFinishedSpans(), 'execute_tool run_code');
    expect(parentOf(run)).toBe(server.spanContext().spanId);
  });

  it('runs a tool body with its execute span active, for the spans the tool makes itself', async () => {
    const t = tracing();
    uninstall = t.uninstall;
    useContextManager();
    bench = createBench();
    const seen: (string | undefined)[] = [];
    bench.registry.register(
      defineTool({
        name: 'inner',
        description: 'records the active span',
        parameters: {},
        output: { schema: { type: 'integer' }, render: () => [] },
        async execute() {
          seen.push(trace.getActiveSpan()?.spanContext().spanId);
          return 1;
        },
      }),
    );
    expect(valueOf(await bench.runCode('return await tools.inner({})')).result).toBe(1);
    expect(seen).toEqual([spanNamed(t.exporter.getFinishedSpans(), 'ptc.execute').spanContext().spanId]);
  });

  it('makes a typecheck span under the run', async () => {
    const t = tracing();
    uninstall = t.uninstall;
    // The checker's own workers are tested elsewhere: a checker that finds nothing is enough here.
    const typings: TypingsService = { typings: async () => '', prompt: async () => '', check: async () => [] };
    bench = createBench({ typecheck: 'enforce', typings });
    expect(valueOf(await bench.runCode('return 1')).result).toBe(1);
    const spans = t.exporter.getFinishedSpans();
    const check = spanNamed(spans, 'ptc.typecheck');
    expect(check.attributes['ptc.typecheck.mode']).toBe('enforce');
    expect(parentOf(check)).toBe(spanNamed(spans, 'execute_tool run_code').spanContext().spanId);
  });

  it('refuses a trace that is not an object of strings', async () => {
    bench = createBench();
    const bad = await bench.runCode('return 1', { trace: { traceparent: 7 } as unknown as TraceContext });
    expect(bad.isError && bad.error.message).toBe('request.trace.traceparent must be a string (or omitted)');
  });

  it('leaves no subscriber behind once uninstalled, and publishes nothing while none listens', async () => {
    const t = tracing();
    for (const name of [RUN_CHANNEL, NESTED_CALL_CHANNEL, TYPECHECK_CHANNEL, TOOL_SOURCE_CHANNEL]) expect(hasSubscribers(`tracing:${name}:start`)).toBe(true);
    t.uninstall();
    t.uninstall();
    for (const channel of [runChannel, nestedCallChannel, typecheckChannel, toolSourceChannel]) expect(channel.hasSubscribers).toBe(false);
    bench = createBench();
    bench.registry.register(barrierTool(1));
    expect(valueOf(await bench.runCode('return await tools.slow({ i: 1 })')).result).toBe(10);
    expect(t.exporter.getFinishedSpans()).toEqual([]);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
