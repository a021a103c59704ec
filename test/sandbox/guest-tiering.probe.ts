/**
 * Run by guest-tiering.test.ts in a process of its own, under V8's --trace-opt: runs each receive
 * a value of 10,000 rows, which the guest freezes (enough work for V8 to optimize the freeze,
 * unless told not to): three whole, three in slices with their shape (as src/json.ts hands out a
 * big array). Prints the program results last, as JSON.
 */
import type { SandboxCallOutcome } from '../../src/sandbox-runtime.ts';
import type { ValueChunkSink } from '../../src/value-chunks.ts';
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';

const rows = Array.from({ length: 10_000 }, (_, id) => ({ id, tags: ['a', 'b'] }));
const whole = (): Promise<SandboxCallOutcome> => Promise.resolve({ ok: true, valueJson: JSON.stringify(rows) });
const inSlices = (_name: string, _args: string, onValueChunk?: ValueChunkSink): Promise<SandboxCallOutcome> => {
  for (let start = 0; start < rows.length; start += 1_000) onValueChunk?.(JSON.stringify(rows.slice(start, start + 1_000)), '["tags"]');
  return Promise.resolve({ ok: true, valueJson: '', chunks: rows.length / 1_000 });
};
const limits = { timeoutMs: 30_000, memoryMiB: 128, maxLogBytes: 1 << 16, maxResultBytes: 1 << 16, maxArgBytes: 1 << 16 };
const runtime = createInProcessRuntime({ warmPoolSize: 0 });
const results: unknown[] = [];
for (const callTool of [whole, whole, whole, inSlices, inSlices, inSlices]) {
  const outcome = await runtime.run({
    code: 'const rows = await tools.rows({}); return Object.isFrozen(rows[9999].tags) && Object.isFrozen(rows[9999]) ? rows.length : -1;',
    toolNames: ['rows'],
    limits,
    sessionId: 'probe',
    signal: new AbortController().signal,
    callTool,
  });
  results.push(outcome.ok ? outcome.resultJson : outcome.failure.kind);
}
await runtime.close();
console.log(JSON.stringify(results));
