/**
 * The context channel inside programs: a nested tool's `exec.agent.inject`
 * and the contexts post-execute hooks attach to nested calls, with the real
 * sandbox runtime.
 */
import { afterEach, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import type { InjectOrigin, InjectedContext } from '../../src/tool.ts';
import { createTypingsService } from '../../typings/service.ts';
import { createBench, valueOf, type Bench } from './harness.ts';

let bench: Bench | undefined;
afterEach(async () => {
  await bench?.close();
  bench = undefined;
});

const text = (t: string) => [{ type: 'text' as const, text: t }];

/** `note({ text })` injects the text and returns its length; `late()` injects the text of the last note, whenever called. */
function withNoteTool(b: Bench): { late(): void } {
  let late = (): void => undefined;
  b.registry.register(
    defineTool({
      name: 'note',
      description: 'Remembers a note for the next model request.',
      parameters: { text: { type: 'string', required: true } },
      output: { schema: { type: 'integer' }, render: (_args, value) => text(String(value)) },
      async execute(args, exec) {
        exec.agent?.inject({ content: args.text, source: { kind: 'plugin', plugin: 'notes' } });
        late = () => exec.agent?.inject({ content: `late ${args.text}`, source: { kind: 'plugin', plugin: 'notes' } });
        return args.text.length;
      },
    }),
  );
  return { late: () => late() };
}

it('a nested tool injects through the run\'s agent, named as the nested call; the program sees only values', async () => {
  bench = createBench();
  withNoteTool(bench);
  const heard: { context: InjectedContext; origin: InjectOrigin }[] = [];
  const result = await bench.runCode('const a = await tools.note({ text: "alpha" }); const b = await tools.note({ text: "beta" }); return [a, b];', {
    agent: { inject: (context, origin) => heard.push({ context, origin }) },
  });
  expect(valueOf(result)).toEqual({ logs: [], result: [5, 4] });
  expect(heard).toEqual([
    { context: { content: text('alpha'), source: { kind: 'plugin', plugin: 'notes' } }, origin: { sessionId: 's1', rootCallId: 'run-1', callId: 'run-1:ptc:1', name: 'note' } },
    { context: { content: text('beta'), source: { kind: 'plugin', plugin: 'notes' } }, origin: { sessionId: 's1', rootCallId: 'run-1', callId: 'run-1:ptc:2', name: 'note' } },
  ]);
});

it('contexts hooks attach to nested calls go on the run\'s result and its tool/result event, in call order', async () => {
  bench = createBench();
  withNoteTool(bench);
  bench.registry.hook('tools/post-execute', (exec, result) =>
    exec.name === 'note' && !result.isError ? { kind: 'accept', additionalContexts: [{ content: `noted ${String(result.value)}`, source: 'audit' }] } : undefined,
  );
  const result = await bench.runCode('await tools.note({ text: "ab" }); await tools.note({ text: "abc" }); return "done";');
  expect(valueOf(result).result).toBe('done');
  expect(result.additionalContexts).toEqual([
    { content: text('noted 2'), source: 'audit' },
    { content: text('noted 3'), source: 'audit' },
  ]);
  const events = bench.sink.events('s1');
  const final = events.at(-1)!;
  expect(final).toMatchObject({ type: 'tool/result', callId: 'run-1', additionalContexts: result.additionalContexts });
  // The nested events stay as they were: no contexts, no value.
  for (const event of events.filter((e) => e.type === 'tool/ptc-dispatch')) expect(Object.keys(event)).not.toContain('additionalContexts');
});

it('a failed run keeps the contexts of the nested calls it made', async () => {
  bench = createBench();
  withNoteTool(bench);
  bench.registry.hook('tools/post-execute', (exec) => (exec.name === 'note' ? { kind: 'accept', additionalContexts: [{ content: 'seen' }] } : undefined));
  const result = await bench.runCode('await tools.note({ text: "x" }); throw new Error("boom");');
  expect(result.isError && result.error.info?.code).toBe('CODE_RUN_FAILED');
  expect(result.additionalContexts).toEqual([{ content: text('seen') }]);
});

it('asTool returns the run\'s contexts (injects in order, then hooks), makes injects durable, and drops an inject after the run', async () => {
  const typings = createTypingsService();
  bench = createBench({ typings });
  const notes = withNoteTool(bench);
  bench.registry.hook('tools/post-execute', (exec) => (exec.name === 'run_code' ? { kind: 'accept', additionalContexts: [{ content: 'run seen', source: 'audit' }] } : undefined));
  const tool = await bench.codeMode.asTool();
  const heard: string[] = [];
  const out = await tool.execute(
    { code: 'await tools.note({ text: "one" }); await tools.note({ text: "two" }); return 1;', description: 'notes' },
    { sessionId: 's2', callId: 'r1', agent: { inject: (context, origin) => heard.push(origin.callId) } },
  );
  expect(out.isError).toBe(false);
  expect(out.contexts).toEqual([
    { via: 'inject', content: text('one'), source: 'notes', callId: 'r1:ptc:1' },
    { via: 'inject', content: text('two'), source: 'notes', callId: 'r1:ptc:2' },
    { via: 'hook', content: text('run seen'), source: 'audit' },
  ]);
  expect(heard).toEqual(['r1:ptc:1', 'r1:ptc:2']);
  expect(bench.sink.events('s2').map((e) => `${e.type} ${'callId' in e ? e.callId : ''}`)).toEqual([
    'tool/ptc-dispatch-start r1:ptc:1',
    'agent/context r1:ptc:1',
    'tool/ptc-dispatch r1:ptc:1',
    'tool/ptc-dispatch-start r1:ptc:2',
    'agent/context r1:ptc:2',
    'tool/ptc-dispatch r1:ptc:2',
    'tool/result r1',
  ]);

  // The run is over: a late inject neither throws into the tool nor writes into the finished run.
  expect(() => notes.late()).not.toThrow();
  expect(bench.sink.events('s2')).toHaveLength(7);
  expect(heard).toHaveLength(2);

  const plain = await tool.execute({ code: 'return 2', description: 'none' }, { sessionId: 's3' });
  expect(plain.contexts).toEqual([{ via: 'hook', content: text('run seen'), source: 'audit' }]);
  await typings.close?.();
});
