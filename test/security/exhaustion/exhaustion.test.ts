/**
 * Resource exhaustion through the whole run_code pipeline: each hazard ends
 * in its typed failure within its limit, and the next run succeeds. Hazards
 * already covered one per file in test/sandbox (sync loop, busy loop after
 * await, heap bombs, log flood, huge result) and test/code-mode/limits
 * (call limit, timeout) are not repeated here; SECURITY.md lists them all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessRuntime } from '../../../sandbox/in-process-runtime.ts';
import { createProcessRuntime } from '../../../sandbox/process/process-runtime.ts';
import type { SandboxFailureKind, SandboxRuntime } from '../../../src/sandbox-runtime.ts';
import { createSecurityBench, expectNoHostLeak, kindOf, resultOf, type SecurityBench } from '../harness.ts';

interface Hazard {
  name: string;
  code: string;
  kind: SandboxFailureKind;
  timeoutMs: number;
  /** What the failure message must say. */
  message?: RegExp;
  /** The run's heap limit, MiB; default 32. */
  memoryMiB?: number;
  processRuntime?: true;
}

const HAZARDS: Hazard[] = [
  { name: 'microtask flood (a then-chain that never yields)', code: 'const f = (): void => { Promise.resolve().then(f); };\nf();\nawait new Promise(() => {});', kind: 'timeout', timeoutMs: 1_000, processRuntime: true },
  { name: 'promise flood (millions of pending promises)', code: 'const ps: unknown[] = [];\nfor (;;) ps.push(new Promise(() => {}));', kind: 'memory', timeoutMs: 20_000 },
  {
    name: 'timer flood (host timers are capped per run)',
    code: 'for (let i = 0; i < 1_000_000; i++) setTimeout(() => {}, 1e9);',
    kind: 'exception',
    timeoutMs: 20_000,
    message: /10000 timers are already pending/,
    processRuntime: true,
  },
  { name: 'deep synchronous recursion', code: 'function f(n: number): number { return f(n + 1) + 1; }\nreturn f(0);', kind: 'exception', timeoutMs: 5_000, message: /RangeError: Maximum call stack size exceeded \(agent\.ts:1:/, processRuntime: true },
  { name: 'unbounded async recursion', code: 'async function f(n: number): Promise<number> { await null; return f(n + 1); }\nreturn await f(0);', kind: 'memory', timeoutMs: 20_000 },
  {
    name: '100,000 sequential nested calls',
    code: 'for (let i = 0; i < 100_000; i++) await tools.echo({ value: i });',
    kind: 'call-limit',
    timeoutMs: 20_000,
    message: /more than 1000 tool calls/,
  },
  {
    name: '100,000 nested calls in one Promise.all burst',
    code: 'await Promise.all(Array.from({ length: 100_000 }, (_, i) => tools.echo({ value: i })));',
    kind: 'call-limit',
    timeoutMs: 20_000,
    message: /more than 1000 tool calls/,
    // The program keeps making calls until the host's call-limit verdict arrives, and on a loaded
    // machine that can be all of them: in a small heap their records raced it to a `memory` failure.
    // All of them fit in this heap, so only the call limit can end the run.
    memoryMiB: 256,
    processRuntime: true,
  },
  { name: 'huge arguments (a string past the heap)', code: "await tools.echo({ value: 'x'.repeat(2 ** 28) });", kind: 'memory', timeoutMs: 20_000 },
  {
    name: 'huge arguments (300,000 objects)',
    code: 'const big = Array.from({ length: 300_000 }, (_, i) => ({ i, s: String(i) }));\nawait tools.echo({ value: big });',
    kind: 'memory',
    timeoutMs: 20_000,
  },
  { name: 'huge result (past maxResultBytes)', code: "return 'x'.repeat(2 * 1024 * 1024);", kind: 'output-limit', timeoutMs: 20_000, message: /over the 1048576-byte limit/ },
];

function suite(name: string, makeRuntime: () => SandboxRuntime, hazards: Hazard[]): void {
  describe(`exhaustion (${name})`, () => {
    let runtime: SandboxRuntime;
    // One bench per heap limit (each registers run_code on a registry of its own).
    const benches = new Map<number, SecurityBench>();
    const benchFor = (memoryMiB: number): SecurityBench => {
      let bench = benches.get(memoryMiB);
      if (bench === undefined) benches.set(memoryMiB, (bench = createSecurityBench(runtime, { memoryMiB, maxResultBytes: 1024 * 1024 })));
      return bench;
    };
    beforeAll(() => {
      runtime = makeRuntime();
    });
    afterAll(async () => {
      for (const bench of benches.values()) await bench.close();
      await runtime.close();
    });

    it.each(hazards.map((h) => [h.name, h] as const))('%s', async (_name, hazard) => {
      const bench = benchFor(hazard.memoryMiB ?? 32);
      const result = await bench.run(hazard.code, hazard.timeoutMs);
      expect(kindOf(result), result.isError ? result.error.message : 'succeeded').toBe(hazard.kind);
      if (hazard.message !== undefined && result.isError) expect(result.error.message).toMatch(hazard.message);
      expectNoHostLeak(result);
      expect(resultOf(await bench.run('return (await tools.echo({ value: 1 }) as any).value + 1'))).toBe(2);
    });
  });
}

suite('in-process', () => createInProcessRuntime({ warmPoolSize: 1, warmPoolMemoryMiB: 32 }), HAZARDS);
suite(
  'process',
  () => createProcessRuntime({ children: 1, runsPerChild: 64, warmPoolSize: 1, warmPoolMemoryMiB: 32, queueTimeoutMs: 60_000 }),
  HAZARDS.filter((h) => h.processRuntime === true),
);
