import { afterEach, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { createCodeModeCore } from '../../src/code-mode/code-mode.ts';
import { createToolRegistry } from '../../src/registry.ts';
import { createBench, sharedRuntime, valueOf, type Bench } from './harness.ts';

let bench: Bench;
afterEach(() => bench?.close());

const secretValue = 'VALUE-ONLY-THE-PROGRAM-SEES';
const secret = defineTool({
  name: 'secret',
  description: 'Returns a value with a recognisable marker.',
  parameters: { n: { type: 'integer', required: true } },
  output: {
    schema: { type: 'object', additionalProperties: false, properties: { token: { type: 'string', required: true } } },
    render: (args) => [{ type: 'text', text: `secret #${args.n} fetched` }],
    presentationMeta: () => ({ meta: 'META-MUST-NOT-APPEAR' }),
  },
  async execute(args) {
    if (args.n === 3) throw new Error('third one fails');
    return { token: `${secretValue}-${args.n}` };
  },
});

it('nested calls are numbered in submission order; events come start-then-settle with no value and no meta', async () => {
  bench = createBench();
  bench.registry.register(secret);
  const result = await bench.runCode(
    'const a = await tools.secret({ n: 1 });\nconst b = await tools.secret({ n: 2 });\ntry { await tools.secret({ n: 3 }); } catch {}\nreturn a.token.length + b.token.length;',
    { callId: 'outer', rootCallId: 'root' },
  );
  expect(valueOf(result).result).toBe(2 * (secretValue.length + 2));
  const events = bench.sink.events('s1');
  expect(events.map((e) => [e.type, 'callId' in e ? e.callId : '', e.seq])).toEqual([
    ['tool/ptc-dispatch-start', 'outer:ptc:1', 1],
    ['tool/ptc-dispatch', 'outer:ptc:1', 2],
    ['tool/ptc-dispatch-start', 'outer:ptc:2', 3],
    ['tool/ptc-dispatch', 'outer:ptc:2', 4],
    ['tool/ptc-dispatch-start', 'outer:ptc:3', 5],
    ['tool/ptc-dispatch', 'outer:ptc:3', 6],
    ['tool/result', 'outer', 7],
  ]);
  expect(events[0]).toMatchObject({ rootCallId: 'root', parentCallId: 'outer', name: 'secret', arguments: { n: 1 } });
  expect(events[1]).toMatchObject({ rootCallId: 'root', parentCallId: 'outer', isError: false, content: [{ type: 'text', text: 'secret #1 fetched' }] });
  expect(events[5]).toMatchObject({ isError: true, error: { name: 'Error', code: 'TOOL_FAILED' } });
  const text = JSON.stringify(events);
  expect(text).not.toContain(secretValue);
  expect(text).not.toContain('META-MUST-NOT-APPEAR');
  for (const event of events.filter((e) => e.type === 'tool/ptc-dispatch')) {
    expect(Object.keys(event).sort()).toEqual(
      ['at', 'callId', 'content', 'isError', 'name', 'parentCallId', 'rootCallId', 'seq', 'sessionId', 'type', ...('error' in event ? ['error'] : [])].sort(),
    );
  }
});

it('arguments rejected inside the isolate dispatch nothing and emit no event', async () => {
  bench = createBench();
  bench.registry.register(secret);
  const result = await bench.runCode('try { await tools.secret({ n: NaN }); } catch (e) { return (e as ToolCallError).code; }');
  expect(valueOf(result).result).toBe('INVALID_ARGS');
  expect(bench.sink.events('s1').map((e) => e.type)).toEqual(['tool/result']);
});

it('a nested failure reaches the program as ToolCallError with the call id', async () => {
  bench = createBench();
  bench.registry.register(secret);
  const result = await bench.runCode('try { await tools.secret({ n: 3 }); } catch (e) { if (e instanceof ToolCallError) return [e.callId, e.code, e.toolName, e.message]; }');
  expect(valueOf(result).result).toEqual(['run-1:ptc:1', 'TOOL_FAILED', 'secret', 'third one fails']);
});

it('schema-invalid arguments come back as INVALID_ARGS from the registry', async () => {
  bench = createBench();
  bench.registry.register(secret);
  const result = await bench.runCode('try { await tools.secret({ n: "one" } as any); } catch (e) { return (e as ToolCallError).code; }');
  expect(valueOf(result).result).toBe('INVALID_ARGS');
});

it('a registered tool named __proto__ (and one with a dash) is reachable from the program through the registry', async () => {
  bench = createBench();
  for (const name of ['__proto__', 'my-tool']) {
    bench.registry.register(
      defineTool({
        name,
        description: `The ${name} tool.`,
        parameters: {},
        output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
        async execute() {
          return `from ${name}`;
        },
      }),
    );
  }
  const result = await bench.runCode('return [await tools["__proto__"]({}), await tools["my-tool"]({}), Object.getPrototypeOf(tools)];');
  expect(valueOf(result).result).toEqual(['from __proto__', 'from my-tool', null]);
});

it("a nested event the sink refuses reaches the registry's onSinkError, and the run still succeeds", async () => {
  const lost: string[] = [];
  const registry = createToolRegistry({
    eventSink: {
      append(event) {
        if (event.type !== 'tool/result') throw new Error('disk full');
        return { ...event, seq: 1, at: '2026-01-01T00:00:00.000Z' };
      },
    },
    onSinkError: (_error, event) => lost.push(event.type),
  });
  const codeMode = createCodeModeCore({ registry, runtime: sharedRuntime() });
  registry.register(secret);
  try {
    const result = await registry.dispatch({ name: 'run_code', arguments: { code: 'return (await tools.secret({ n: 1 })).token', description: 'lossy sink' } });
    expect(valueOf(result).result).toBe(`${secretValue}-1`);
    expect(lost).toEqual(['tool/ptc-dispatch-start', 'tool/ptc-dispatch']);
  } finally {
    await codeMode.close();
  }
});
