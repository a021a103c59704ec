/**
 * Run by exit-collection.test.ts in a process of its own, under V8 flags
 * that keep marking under way and advanced by this thread alone: an
 * in-process runtime keeps isolates for a few sessions, closes, and the
 * process leaves its event loop. Closing drops isolated-vm's host objects
 * just before the loop ends; without sandbox/exit-collection.ts, disposing
 * the main isolate finishes the marking and aborts the process in
 * isolated-vm. Prints how the runs ended.
 */
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';

const limits = { timeoutMs: 10_000, memoryMiB: 32, maxLogBytes: 1 << 16, maxResultBytes: 1 << 16, maxArgBytes: 1 << 16 };
const runtime = createInProcessRuntime({ sessionIsolates: 16, warmPoolSize: 2 });
const results: unknown[] = [];
for (let round = 0; round < 2; round++) {
  const outcomes = await Promise.all(
    Array.from({ length: 4 }, (_, session) =>
      runtime.run({
        code: 'return (await tools.echo({})) + 1;',
        toolNames: ['echo'],
        limits,
        sessionId: `s${session}`,
        signal: new AbortController().signal,
        callTool: () => Promise.resolve({ ok: true, value: 41 }),
      }),
    ),
  );
  for (const outcome of outcomes) results.push(outcome.ok ? outcome.resultJson : outcome.failure.kind);
}
await runtime.close();
console.log(JSON.stringify({ results, reused: runtime.status().isolatesReused }));
