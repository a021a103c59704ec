/**
 * Run by guest-tiering.test.ts in a process of its own, under V8's --trace-opt: three runs each
 * receive a value of 10,000 rows, which the guest freezes (enough work for V8 to optimize the
 * freeze, unless told not to). Prints the program results last, as JSON.
 */
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';

const rows = JSON.stringify(Array.from({ length: 10_000 }, (_, id) => ({ id, tags: ['a', 'b'] })));
const limits = { timeoutMs: 30_000, memoryMiB: 128, maxLogBytes: 1 << 16, maxResultBytes: 1 << 16, maxArgBytes: 1 << 16 };
const runtime = createInProcessRuntime({ warmPoolSize: 0 });
const results: unknown[] = [];
for (let run = 0; run < 3; run++) {
  const outcome = await runtime.run({
    code: 'const rows = await tools.rows({}); return Object.isFrozen(rows[9999].tags) ? rows.length : -1;',
    toolNames: ['rows'],
    limits,
    sessionId: 'probe',
    signal: new AbortController().signal,
    callTool: () => Promise.resolve({ ok: true, valueJson: rows }),
  });
  results.push(outcome.ok ? outcome.resultJson : outcome.failure.kind);
}
await runtime.close();
console.log(JSON.stringify(results));
