/**
 * Run by thread-children.test.ts in a process of its own: a thread child
 * whose runtime writes to stdout, then one run. This process's stdout must
 * stay empty (it may carry data, as `ptc mcp`'s does); the line goes to stderr.
 */
import { resolveOptions } from '../../sandbox/process/options.ts';
import { createChildPoolRuntime } from '../../sandbox/process/process-runtime.ts';

const runtime = createChildPoolRuntime(
  resolveOptions({ children: 1, warmPoolSize: 0, runtimeModule: new URL('./noisy-runtime.fixture.ts', import.meta.url).href }, 'thread'),
);
await runtime.ready();
const limits = { timeoutMs: 5_000, memoryMiB: 32, maxLogBytes: 1 << 16, maxResultBytes: 1 << 16, maxArgBytes: 1 << 16 };
const outcome = await runtime.run({
  code: 'return 1 + 1',
  toolNames: [],
  limits,
  signal: new AbortController().signal,
  callTool: () => Promise.resolve({ ok: true, value: null }),
});
await runtime.close();
process.stderr.write(`outcome ${JSON.stringify(outcome)}\n`);
