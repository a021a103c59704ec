/**
 * Run by isolate-factory.test.ts in a process of its own: 20 in-process
 * runtimes, each closed while a burst of 16 runs is still having its isolates
 * made by the isolate factory. Prints how the runs ended, then leaves its
 * event loop (see sandbox/leave-process.ts). A factory that disposed a helper
 * with makes in flight crashed this process with SIGSEGV.
 */
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { isolateFactory } from '../../sandbox/isolate-factory.ts';

const limits = { timeoutMs: 10_000, memoryMiB: 32, maxLogBytes: 1 << 16, maxResultBytes: 1 << 16, maxArgBytes: 1 << 16 };
const ended = new Map<string, number>();
for (let round = 0; round < 20; round++) {
  const runtime = createInProcessRuntime({ warmPoolSize: 0, warmPoolMemoryMiB: 32 });
  const runs = Array.from({ length: 16 }, () =>
    runtime.run({
      code: 'return 1;',
      toolNames: [],
      limits,
      signal: new AbortController().signal,
      callTool: () => Promise.resolve({ ok: false, error: { code: 'TOOL_FAILED', message: 'no tools here', callId: '' } }),
    }),
  );
  // Makes straight on the factory too, abandoned in flight while the runtime closes.
  const made = Array.from({ length: 4 }, () => isolateFactory().make(32, () => undefined));
  await runtime.close();
  for (const outcome of await Promise.all(runs)) {
    const kind = outcome.ok ? 'ok' : outcome.failure.kind;
    ended.set(kind, (ended.get(kind) ?? 0) + 1);
  }
  for (const { isolate } of await Promise.all(made)) isolate.dispose();
}
console.log(JSON.stringify(Object.fromEntries(ended)));
