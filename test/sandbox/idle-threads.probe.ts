/**
 * Run by burst-threads.test.ts in a process of its own: a runtime whose
 * burst threads took a burst, then is left idle and never closed. Like idle
 * pooled isolates and idle child processes, idle threads must not hold the
 * event loop: this process ends by itself once the burst is done.
 */
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { SandboxChild } from '../../sandbox/process/sandbox-child.ts';

let routed = 0;
const run = SandboxChild.prototype.run;
SandboxChild.prototype.run = function (this: SandboxChild, request) {
  routed++;
  return run.call(this, request);
};

const runtime = createInProcessRuntime({ warmPoolSize: 1, warmPoolMemoryMiB: 32, burstThreads: 2 });
await runtime.ready();
const limits = { timeoutMs: 10_000, memoryMiB: 32, maxLogBytes: 1 << 16, maxResultBytes: 1 << 16, maxArgBytes: 1 << 16 };
const outcomes = await Promise.all(
  Array.from({ length: 24 }, (_, i) =>
    runtime.run({
      code: `return ${i};`,
      toolNames: [],
      limits,
      signal: new AbortController().signal,
      callTool: () => Promise.resolve({ ok: true, value: null }),
    }),
  ),
);
process.stdout.write(`${JSON.stringify({ ok: outcomes.filter((outcome) => outcome.ok).length, routed })}\n`);
