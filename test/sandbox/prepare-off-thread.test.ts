/**
 * `prepareOffThread` (sandbox/in-process-runtime.ts): an isolate whose context,
 * bootstrap and install were made on isolated-vm's threads behaves as one made
 * on this thread, from the warm pool and on the request path (pool size 0).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { SandboxRunOutcome } from '../../src/sandbox-runtime.ts';
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { createFakeHost, testLimits } from './harness.ts';

const PROGRAM = `
const doubled = await tools.double({ n: 21 });
console.log('doubled', doubled.n);
const later = await new Promise((resolve) => setTimeout(() => resolve('timer'), 1));
let caught = '';
try { await tools.fail({}); } catch (error) { caught = error.name + ': ' + error.message; }
return { n: doubled.n, frozen: Object.isFrozen(doubled), later, caught, hasWasm: typeof WebAssembly };
`;

const tools = {
  double: (args: unknown) => ({ n: (args as { n: number }).n * 2 }),
  fail: () => {
    throw new Error('no such thing');
  },
};

/** Every observable part of an outcome, the same for both settings. */
function observed(outcome: SandboxRunOutcome): unknown {
  return outcome.ok ? { ok: true, result: JSON.parse(outcome.resultJson ?? 'null'), logs: outcome.logs } : { ok: false, failure: outcome.failure };
}

describe.each([true, false])('prepareOffThread: %s', (prepareOffThread) => {
  const pooled = createFakeHost(createInProcessRuntime({ warmPoolSize: 1, warmPoolMemoryMiB: testLimits.memoryMiB, burstThreads: 0, prepareOffThread }));
  const unpooled = createFakeHost(createInProcessRuntime({ warmPoolSize: 0, burstThreads: 0, prepareOffThread }));
  afterAll(async () => {
    await pooled.close();
    await unpooled.close();
  });

  for (const [label, host] of [
    ['from the warm pool', pooled],
    ['made on the request path', unpooled],
  ] as const) {
    it(`runs a program with tool calls, a log line, a timer and a caught failure (${label})`, async () => {
      for (let i = 0; i < 3; i++) {
        expect(observed(await host.run(PROGRAM, { tools }))).toEqual({
          ok: true,
          result: { n: 42, frozen: true, later: 'timer', caught: 'ToolCallError: no such thing', hasWasm: 'undefined' },
          logs: ['doubled 42'],
        });
      }
    });

    it(`reports an uncaught exception with the program's line (${label})`, async () => {
      const outcome = await host.run('const x = 1;\nthrow new TypeError("bad " + x);');
      expect(outcome).toMatchObject({ ok: false, failure: { kind: 'exception', line: 2 } });
      expect(outcome.ok ? '' : outcome.failure.message).toContain('TypeError: bad 1');
    });
  }
});
