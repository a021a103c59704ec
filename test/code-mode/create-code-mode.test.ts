import { expect, it } from 'vitest';
import { createCodeMode, createMemoryEventSink, createToolRegistry, defineTool } from '../../entries/index.ts';
import { createTypingsService } from '../../typings/service.ts';

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

it('creating code mode registers run_code with the admit hook; a second one is refused; close removes both', async () => {
  const registry = createToolRegistry({ eventSink: createMemoryEventSink() });
  registry.register(
    defineTool({
      name: 'echo',
      description: 'Echoes.',
      parameters: { text: { type: 'string', required: true } },
      output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
      async execute(args) {
        return args.text;
      },
    }),
  );
  const codeMode = createCodeMode({ registry });
  try {
    expect(registry.schemas().map((schema) => schema.name)).toEqual(['echo', 'run_code']);
    // The direct call is pointed at a run_code that exists.
    const direct = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(direct.isError && direct.error.message).toMatch(/only callable from a program: call run_code/);
    expect(() => createCodeMode({ registry })).toThrow(/"run_code" is already registered/);
  } finally {
    await codeMode.close();
  }
  expect(registry.schemas().map((schema) => schema.name)).toEqual(['echo']);
  const after = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
  expect(after.isError ? after.error.message : after.value).toBe('hi');
});

it('asTool() is run_code for any framework: the prompt as description, JSON Schemas, rendered content and the canonical value', async () => {
  const registry = createToolRegistry({ eventSink: createMemoryEventSink() });
  // A typings service of the host's own, stating no limits: the prompt still states the enforced ones.
  const codeMode = createCodeMode({ registry, limits: { maxCalls: 7 }, typings: createTypingsService() });
  try {
    const tool = await codeMode.asTool();
    expect(tool.name).toBe('run_code');
    expect(tool.description).toMatch(/7 (tool )?calls|7 nested/);
    expect(tool.description).not.toMatch(/1,000 (tool )?calls|1000 (tool )?calls/);
    expect(codeMode.limits.maxCalls).toBe(7);
    expect(tool.inputSchema).toMatchObject({ type: 'object', required: ['code', 'description'] });
    expect(tool.outputSchema).toMatchObject({ type: 'object', properties: { logs: { type: 'array' } } });

    const ok = await tool.execute({ code: 'console.log("hi"); return [1, 2]', description: 'list' }, { sessionId: 'host' });
    expect(ok).toEqual({
      status: 'done',
      isError: false,
      value: { logs: ['hi'], result: [1, 2] },
      content: [{ type: 'text', text: 'hi\n[\n  1,\n  2\n]' }],
      stats: expect.objectContaining({ logBytes: 3, resultBytes: 5, calls: 0, maxCalls: 7, nestedCalls: [] }),
    });

    const failed = await tool.execute({ code: 'return (', description: 'broken' });
    expect(failed.isError).toBe(true);
    expect(failed.value).toBeUndefined();
    expect(failed.error?.info).toMatchObject({ code: 'CODE_RUN_FAILED', kind: 'syntax', line: expect.any(Number) });

    const controller = new AbortController();
    controller.abort();
    const aborted = await tool.execute({ code: 'return 1', description: 'never' }, { signal: controller.signal });
    expect(aborted.isError && aborted.error?.info?.code).toMatch(/^ABORTED/);
  } finally {
    await codeMode.close();
  }
});

it("the in-process runtime's burst threads: pool.burstThreads sets how many; tools of a burst still run on this thread", async () => {
  const { isMainThread } = await import('node:worker_threads');
  const registry = createToolRegistry({ eventSink: createMemoryEventSink() });
  const onMainThread: boolean[] = [];
  registry.register(
    defineTool({
      name: 'where',
      description: 'Says whether the tool runs on the main thread.',
      parameters: {},
      output: { schema: { type: 'boolean' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
      isConcurrencySafe: () => true,
      async execute() {
        onMainThread.push(isMainThread);
        return isMainThread;
      },
    }),
  );
  for (const burstThreads of [1, 0]) {
    const codeMode = createCodeMode({ registry, pool: { burstThreads }, limits: { timeoutMs: 10_000 } });
    try {
      await codeMode.ready();
      expect(codeMode.runtime.status().children).toBe(burstThreads);
      const results = await Promise.all(
        Array.from({ length: 6 }, () => registry.dispatch({ name: 'run_code', arguments: { code: 'return await tools.where({})', description: 'where' } })),
      );
      expect(results.map((result) => (result.isError ? result.error.message : result.value))).toEqual(Array.from({ length: 6 }, () => ({ logs: [], result: true })));
    } finally {
      await codeMode.close();
    }
  }
  expect(onMainThread).toEqual(Array.from({ length: 12 }, () => true));
});
