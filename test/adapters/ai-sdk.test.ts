import { generateText, jsonSchema, stepCountIs, tool, type Tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { z as z4 } from 'zod-v4';
import { createCodeMode, createMemoryEventSink, createToolRegistry, SchemaError, type ComposedCodeMode } from '../../entries/index.ts';
import { createCodeModeTool, fromAiSdkTools } from '../../entries/ai-sdk.ts';

// The AI SDK adapter against the real `ai` package and its mock language model.
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
function callsTool(toolName: string, input: object) {
  return {
    content: [{ type: 'tool-call' as const, toolCallId: 'call-1', toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls' as const, raw: undefined },
    usage,
    warnings: [],
  };
}
const says = (text: string) => ({ content: [{ type: 'text' as const, text }], finishReason: { unified: 'stop' as const, raw: undefined }, usage, warnings: [] });

const weather = tool({
  description: 'Current temperature of a city, in °C.',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, celsius: city === 'Oslo' ? 3 : 21 }),
});
const toFahrenheit = tool({
  description: 'Converts °C to °F.',
  inputSchema: jsonSchema<{ celsius: number }>({ type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'], additionalProperties: false }),
  outputSchema: z.object({ fahrenheit: z.number() }),
  execute: async ({ celsius }) => ({ fahrenheit: celsius * 1.8 + 32 }),
});

let codeMode: ComposedCodeMode | undefined;
afterEach(async () => {
  await codeMode?.close();
  codeMode = undefined;
});

function setUp(tools: Record<string, Tool>) {
  const registry = createToolRegistry({ eventSink: createMemoryEventSink() });
  for (const definition of fromAiSdkTools(tools)) registry.register(definition);
  codeMode = createCodeMode({ registry, limits: { timeoutMs: 20_000 } });
  return { registry, codeMode };
}

describe('ptc-executor/ai-sdk', () => {
  it('a model calls the code tool with a program over two imported tools, and its next step reads our rendered result', async () => {
    const { codeMode } = setUp({ weather, toFahrenheit });
    const code = [
      "const oslo = await tools.weather({ city: 'Oslo' });",
      'console.log(`Oslo: ${oslo.celsius} °C`);',
      'const { fahrenheit } = await tools.toFahrenheit({ celsius: oslo.celsius });',
      'return { city: oslo.city, fahrenheit };',
    ].join('\n');
    const model = new MockLanguageModelV4({ doGenerate: [callsTool('code', { code, description: 'Oslo in °F' }), says('It is 37.4 °F in Oslo.')] });
    const result = await generateText({ model, tools: { code: await createCodeModeTool(codeMode) }, stopWhen: stepCountIs(3), prompt: 'How warm is Oslo in °F?' });

    expect(result.text).toBe('It is 37.4 °F in Oslo.');
    // The model was offered the prompt with the typings of both imported tools.
    const offered = model.doGenerateCalls[0].tools?.find((t) => t.name === 'code');
    expect(offered && 'description' in offered ? offered.description : '').toMatch(/toFahrenheit[\s\S]*weather/);
    // The host gets the canonical value; the model's next step gets the rendered logs and result.
    expect(result.steps[0].toolResults[0].output).toMatchObject({ isError: false, value: { logs: ['Oslo: 3 °C'], result: { city: 'Oslo', fahrenheit: 37.4 } } });
    const toolMessage = model.doGenerateCalls[1].prompt.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toEqual([
      expect.objectContaining({ type: 'tool-result', toolCallId: 'call-1', output: { type: 'text', value: 'Oslo: 3 °C\n{\n  "city": "Oslo",\n  "fahrenheit": 37.4\n}' } }),
    ]);
  });

  it('a failed run reaches the model as error text with its kind, and the host as structured fields', async () => {
    const { codeMode } = setUp({ weather });
    const model = new MockLanguageModelV4({ doGenerate: [callsTool('run_code', { code: 'return await tools.weather({})', description: 'no city' }), says('sorry')] });
    const result = await generateText({ model, tools: { run_code: await createCodeModeTool(codeMode) }, stopWhen: stepCountIs(3), prompt: 'weather?' });
    expect(result.steps[0].toolResults[0].output).toMatchObject({ isError: true, error: { info: { code: 'CODE_RUN_FAILED', kind: 'exception', toolName: 'weather' } } });
    const toolMessage = model.doGenerateCalls[1].prompt.find((message) => message.role === 'tool');
    const part = toolMessage?.content[0];
    expect(part?.type === 'tool-result' && part.output.type).toBe('error-text');
    expect(part?.type === 'tool-result' && part.output.type === 'error-text' && part.output.value).toMatch(/^Error: code run failed \(exception\): ToolCallError \(INVALID_ARGS\) from tools\["weather"\]/);
  });

  it('aborting generateText mid-run cancels the run and the nested call in flight', async () => {
    const events: string[] = [];
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const wait = tool({
      description: 'Waits until cancelled.',
      inputSchema: z.object({}),
      execute: (_input, { abortSignal }) =>
        new Promise<string>((resolve) => {
          events.push('nested call started');
          abortSignal?.addEventListener('abort', () => (events.push('nested call aborted'), resolve('stopped')), { once: true });
          started();
        }),
    });
    const { codeMode } = setUp({ wait });
    const model = new MockLanguageModelV4({ doGenerate: [callsTool('run_code', { code: 'await tools.wait({}); return "finished"', description: 'wait' }), says('done')] });
    const controller = new AbortController();
    const generation = generateText({ model, tools: { run_code: await createCodeModeTool(codeMode) }, stopWhen: stepCountIs(3), prompt: 'wait', abortSignal: controller.signal });
    await running;
    events.push('abort');
    controller.abort();
    await expect(generation).rejects.toThrow();
    expect(events).toEqual(['nested call started', 'abort', 'nested call aborted']);
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it('fromAiSdkTools keeps keys as names, renders a value without an output schema as JSON text, and honours a zod output schema', async () => {
    const broken = tool({ description: 'Breaks its output schema.', inputSchema: z.object({}), outputSchema: z.object({ n: z.number() }), execute: async () => ({ n: 'one' }) as unknown as { n: number } });
    const { registry } = setUp({ weather, broken });
    expect(registry.schemas().map((s) => s.name).sort()).toEqual(['broken', 'run_code', 'weather']);
    const code = "const w = await tools.weather({ city: 'Rome' }); try { await tools.broken({}); } catch (e) { return [w, e.code]; }";
    const result = await registry.dispatch({ name: 'run_code', arguments: { code, description: 'check' }, callId: 'r1', sessionId: 's' });
    expect(result.isError ? result.error.message : result.value).toEqual({ logs: [], result: [{ city: 'Rome', celsius: 21 }, 'INVALID_TOOL_OUTPUT'] });
    const nested = (registry.eventSink as ReturnType<typeof createMemoryEventSink>).events('s').find((e) => e.type === 'tool/ptc-dispatch' && e.name === 'weather');
    expect(nested && 'content' in nested ? nested.content : undefined).toEqual([{ type: 'text', text: '{\n  "city": "Rome",\n  "celsius": 21\n}' }]);
  });

  it('zod 3, zod 4 and jsonSchema() inputs with constraints: typed from their JSON Schema, validated by the tool\'s own schema at call time', async () => {
    const tools = {
      z3: tool({ description: 'zod 3', inputSchema: z.object({ name: z.string().min(3), n: z.number().int().positive().default(1) }), execute: async (input) => input }),
      z4: tool({
        description: 'zod 4',
        inputSchema: z4.object({ email: z4.email(), tags: z4.array(z4.string()).max(2), note: z4.string().nullable() }),
        execute: async (input) => input,
      }),
      raw: tool({
        description: 'jsonSchema',
        inputSchema: jsonSchema<{ id: string }>({ type: 'object', properties: { id: { type: 'string', pattern: '^a', minLength: 2 }, kind: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, required: ['id'] }),
        execute: async (input) => input,
      }),
    };
    const { registry, codeMode } = setUp(tools);
    const code = `
      const out = [];
      for (const [name, args] of [
        ['z3', { name: 'Ada' }], ['z3', { name: 'Al' }], ['z3', { name: 'Ada', n: 1.5 }],
        ['z4', { email: 'a@b.co', tags: ['x'], note: null }], ['z4', { email: 'nope', tags: ['x', 'y', 'z'], note: null }],
        ['raw', { id: 'ab', kind: null }], ['raw', { id: 'b' }],
      ]) {
        try { out.push(await tools[name](args)); } catch (e) { out.push(e.code + ' ' + e.message); }
      }
      return out;
    `;
    const result = await registry.dispatch({ name: 'run_code', arguments: { code, description: 'constraints' }, callId: 'r1', sessionId: 's' });
    const [ok3, short, fraction, ok4, bad4, okRaw, badRaw] = (result.isError ? [result.error.message] : (result.value as { result: unknown[] }).result) as [unknown, string, string, unknown, string, unknown, string];
    // zod's defaults apply, as the AI SDK would.
    expect(ok3).toEqual({ name: 'Ada', n: 1 });
    expect(short).toMatch(/^INVALID_ARGS .*arguments\.name: String must contain at least 3/);
    expect(fraction).toMatch(/^INVALID_ARGS .*arguments\.n: Expected integer/);
    expect(ok4).toEqual({ email: 'a@b.co', tags: ['x'], note: null });
    expect(bad4).toMatch(/^INVALID_ARGS .*arguments\.email: Invalid email.*arguments\.tags: Too big/);
    expect(okRaw).toEqual({ id: 'ab', kind: null });
    expect(badRaw).toMatch(/^INVALID_ARGS .*arguments\.id: must NOT have fewer than 2 characters; arguments\.id: must match pattern "\^a"/);
    const typings = await codeMode.typings();
    expect(typings).toContain('/** @minLength 3 */ name: string');
    expect(typings).toContain('raw: ({ /** @minLength 2 @pattern ^a */ id: string; kind?: (string | null) } & JsonObject)');
  });

  it('a JSON Schema carrying a non-enumerable "~standard" (zod 4) is read as JSON, not refused', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    Object.defineProperty(schema, '~standard', { value: { version: 1, vendor: 'zod' }, enumerable: false });
    const [definition] = fromAiSdkTools({ weather: tool({ description: 'w', inputSchema: jsonSchema<{ city: string }>(schema as never), execute: async () => 1 }) });
    expect(definition.parameters).toEqual({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
  });

  it('an output schema outside the subset is typed and marked unvalidated; one inside is enforced', async () => {
    const counted = tool({ description: 'c', inputSchema: z4.object({}), outputSchema: z4.object({ counts: z4.record(z4.string(), z4.number()) }), execute: async () => ({ counts: { a: 2 } }) });
    const named = tool({ description: 'n', inputSchema: z4.object({}), outputSchema: z4.object({ name: z4.string().nullable() }), execute: async () => ({ name: null }) });
    const { registry, codeMode } = setUp({ counted, named });
    const schemas = registry.schemas();
    expect(schemas.find((schema) => schema.name === 'counted')).toMatchObject({ output: {}, unvalidatedOutput: { type: 'object' } });
    expect(schemas.find((schema) => schema.name === 'named')?.output).toMatchObject({ type: 'object', properties: { name: { oneOf: [{ type: 'string' }, { type: 'null' }] } } });
    expect(await codeMode.typings()).toMatch(/Output NOT validated \(its declared schema could not be enforced\)[^\n]*\n\s*counted: \{/);
  });

  it('fromAiSdkTools throws SchemaError naming the tool and the path: no execute, a non-object input', () => {
    const noExecute = tool({ description: 'z', inputSchema: z.object({}) });
    const scalar = tool({ description: 's', inputSchema: jsonSchema<string>({ type: 'string' }), execute: async () => 1 });
    let thrown: unknown;
    try {
      fromAiSdkTools({ noExecute, scalar });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SchemaError);
    expect((thrown as SchemaError).violations).toEqual([
      'noExecute: has no execute function; only tools this process runs can be called from a program',
      'scalar.inputSchema: must be an object schema (the arguments are one JSON object)',
    ]);
  });
});
