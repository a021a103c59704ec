import { expect, it } from 'vitest';
import { createCodeMode, createMemoryEventSink, createToolRegistry, defineTool } from '../../entries/index.ts';

it('createCodeMode wires the in-process runtime and the typings service by default', async () => {
  const registry = createToolRegistry({ eventSink: createMemoryEventSink() });
  registry.register(
    defineTool({
      name: 'add',
      description: 'Adds two numbers.',
      parameters: { a: { type: 'number', required: true }, b: { type: 'number', required: true } },
      output: { schema: { type: 'number' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
      isConcurrencySafe: () => true,
      async execute(args) {
        return args.a + args.b;
      },
    }),
  );
  const codeMode = createCodeMode({ registry, limits: { timeoutMs: 5_000 } });
  try {
    const result = await registry.dispatch({ name: 'run_code', arguments: { code: 'return await tools.add({ a: 1, b: 2 })', description: 'add' } });
    expect(result.isError ? result.error.message : result.value).toEqual({ logs: [], result: 3 });
    expect(await codeMode.typings()).toMatch(/add/);
    expect(await codeMode.prompt()).toMatch(/5 s|5 seconds|5,000/);
  } finally {
    await codeMode.close();
  }
});

it("runtime 'process' runs programs in child processes, tools staying in this one", async () => {
  const registry = createToolRegistry({ eventSink: createMemoryEventSink() });
  let callerPid = 0;
  registry.register(
    defineTool({
      name: 'whereami',
      description: 'Says which process runs the tool.',
      parameters: {},
      output: { schema: { type: 'integer' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
      async execute() {
        callerPid = process.pid;
        return process.pid;
      },
    }),
  );
  const codeMode = createCodeMode({ registry, runtime: 'process', limits: { timeoutMs: 10_000 } });
  try {
    const result = await registry.dispatch({ name: 'run_code', arguments: { code: 'return await tools.whereami({})', description: 'pid' } });
    expect(result.isError ? result.error.message : result.value).toEqual({ logs: [], result: process.pid });
    expect(callerPid).toBe(process.pid);
  } finally {
    await codeMode.close();
  }
});
