/**
 * Run by dispose-during-call.test.ts in a process of its own: 200 runs, each
 * cancelled by its own tool in the turn the tool answers, so the isolate is
 * disposed while the guest waits on a call's crossing. Prints the outcome
 * kinds, then leaves its event loop, which waits for every isolate to be gone
 * (process.exit would not: see sandbox/leave-process.ts): a process that
 * deadlocks, or whose isolate threads never end, never exits.
 */
import { createCodeModeCore } from '../../src/code-mode/code-mode.ts';
import { defineTool } from '../../src/define-tool.ts';
import { createToolRegistry } from '../../src/registry.ts';
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';

let controller = new AbortController();
const registry = createToolRegistry();
registry.register(
  defineTool({
    name: 'stop',
    description: 'Answers, and cancels the run in the same turn.',
    parameters: {},
    output: { schema: { type: 'integer' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
    isConcurrencySafe: () => true,
    execute: async () => {
      queueMicrotask(() => controller.abort());
      return 1;
    },
  }),
);
const codeMode = createCodeModeCore({ registry, runtime: createInProcessRuntime({ warmPoolSize: 2 }) });
const outcomes = new Map<string, number>();
for (let i = 0; i < 200; i++) {
  controller = new AbortController();
  const result = await registry.dispatch({
    name: 'run_code',
    arguments: { code: 'let sum = 0;\nfor (let i = 0; i < 50; i++) sum += await tools.stop({});\nreturn sum;', description: 'dispose during a call' },
    sessionId: 'probe',
    signal: controller.signal,
  });
  const outcome = result.isError ? String(result.error.info?.code) : 'ok';
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
}
await codeMode.close();
console.log(JSON.stringify(Object.fromEntries(outcomes)));
