/**
 * Run by burst-threads.test.ts in a process of its own: in-process runtimes
 * closed in every state of their burst threads (still starting, mid-burst
 * with runs in the threads, aborted runs still unwinding there), and threads
 * killed outright with runs in them. Prints how the runs ended, then leaves
 * its event loop (see sandbox/leave-process.ts). A thread torn down with live
 * isolates must not take the process with it.
 */
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { SandboxChild } from '../../sandbox/process/sandbox-child.ts';

const limits = { timeoutMs: 10_000, memoryMiB: 32, maxLogBytes: 1 << 16, maxResultBytes: 1 << 16, maxArgBytes: 1 << 16 };
const ended = new Map<string, number>();
const count = (kind: string): void => void ended.set(kind, (ended.get(kind) ?? 0) + 1);

// Every child made from here on, so that the last rounds can kill one mid-run.
const children: SandboxChild[] = [];
const run = SandboxChild.prototype.run;
SandboxChild.prototype.run = function (this: SandboxChild, request) {
  children.push(this);
  return run.call(this, request);
};

for (let round = 0; round < 12; round++) {
  const runtime = createInProcessRuntime({ warmPoolSize: 0, warmPoolMemoryMiB: 32, maxActiveRuns: 4 });
  if (round % 3 !== 0) await runtime.ready();
  const controller = new AbortController();
  const runs = Array.from({ length: 16 }, (_, i) =>
    runtime.run({
      // Some wait on a tool, some compute for a while, some only return.
      code: i % 3 === 0 ? 'return await tools.wait({});' : i % 3 === 1 ? 'let n = 0; for (let k = 0; k < 2e6; k++) n += k; return n;' : 'return 1;',
      toolNames: ['wait'],
      limits,
      signal: i % 4 === 0 ? controller.signal : new AbortController().signal,
      callTool: () => new Promise((resolve) => setTimeout(() => resolve({ ok: true, value: 1 }), 5)),
    }),
  );
  if (round % 2 === 1) controller.abort();
  // Closed once the burst is under way (runs in the threads), or at once.
  if (round % 4 !== 3) await Promise.race(runs);
  if (round >= 9) {
    // A thread killed with runs in it: they fail `crashed`, the process stays up.
    await new Promise((resolve) => setTimeout(resolve, 5));
    children.at(-1)?.kill('the probe killed the thread');
  }
  await runtime.close();
  for (const outcome of await Promise.all(runs)) count(outcome.ok ? 'ok' : outcome.failure.kind);
}
console.log(JSON.stringify({ ended: Object.fromEntries(ended), routed: children.length }));
