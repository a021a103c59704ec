/**
 * Run by guest-tiering.test.ts in a process of its own, with natives syntax allowed. Runs one
 * program in the in-process runtime, then, when asked (`opt-in`), calls the opt-in; last, forces
 * V8 to optimize two host functions, one named like the guest's freezes and one not, and prints
 * whether each ended optimized, as JSON. `%OptimizeFunctionOnNextCall` compiles at once, so the
 * answer does not hang on V8's budget or timing.
 */
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { GUEST_FREEZE_PREFIX, keepGuestFreezeUnoptimized } from '../../sandbox/guest-tiering.ts';

const limits = { timeoutMs: 30_000, memoryMiB: 128, maxLogBytes: 1 << 16, maxResultBytes: 1 << 16, maxArgBytes: 1 << 16 };
const runtime = createInProcessRuntime({ warmPoolSize: 0 });
const outcome = await runtime.run({
  code: 'const rows = await tools.rows({}); return rows.length;',
  toolNames: ['rows'],
  limits,
  sessionId: 'probe',
  signal: new AbortController().signal,
  callTool: () => Promise.resolve({ ok: true, value: [{ id: 1 }, { id: 2 }] }),
});
if (!outcome.ok || outcome.resultJson !== '2') throw new Error('the probe program did not run');
await runtime.close();
if (process.argv.includes('opt-in')) keepGuestFreezeUnoptimized();

// V8's bit for "optimized" in %GetOptimizationStatus.
const OPTIMIZED = 1 << 4;
const forceOptimize = new Function(
  'f',
  '%PrepareFunctionForOptimization(f); f({ a: 1 }); f({ a: 2 }); %OptimizeFunctionOnNextCall(f); f({ a: 3 }); return %GetOptimizationStatus(f);',
) as (f: (o: { a: number }) => number) => number;
const optimized: Record<string, boolean> = {};
for (const name of [`${GUEST_FREEZE_PREFIX}Probe`, 'otherProbe']) {
  const f = new Function(`return function ${name}(o) { return o.a + 1; }`)() as (o: { a: number }) => number;
  optimized[name] = (forceOptimize(f) & OPTIMIZED) !== 0;
}
console.log(JSON.stringify(optimized));
