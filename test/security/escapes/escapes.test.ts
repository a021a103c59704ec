/**
 * The escape corpus (corpus.ts) against the in-process runtime, and a
 * representative subset against the process runtime. Each case: a typed
 * failure or a harmless success, no host object reached, no host path in
 * anything readable, the host's sentinels untouched, and the next run works.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessRuntime } from '../../../sandbox/in-process-runtime.ts';
import { createProcessRuntime } from '../../../sandbox/process/process-runtime.ts';
import type { SandboxRuntime } from '../../../src/sandbox-runtime.ts';
import { createSecurityBench, expectNoHostLeak, expectSentinelsIntact, kindOf, plantSentinels, resultOf, type SecurityBench } from '../harness.ts';
import { ESCAPE_CASES, type EscapeCase } from './corpus.ts';
import { EXPECTED_VALUES } from './expected.ts';

function suite(name: string, makeRuntime: () => SandboxRuntime, cases: readonly EscapeCase[]): void {
  describe(`escapes (${name})`, () => {
    let runtime: SandboxRuntime;
    let bench: SecurityBench;
    beforeAll(() => {
      plantSentinels();
      runtime = makeRuntime();
      bench = createSecurityBench(runtime, { memoryMiB: 32 });
    });
    afterAll(async () => {
      await bench.close();
      await runtime.close();
    });

    it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, escape) => {
      const result = await bench.run(escape.code, 5_000);
      expect(kindOf(result) ?? 'ok', result.isError ? result.error.message : '').toBe(escape.expect);
      if (!result.isError) {
        const value = resultOf(result) as { leaks: string[]; process: string; require: string };
        expect(value).toMatchObject({ leaks: [], process: 'undefined', require: 'undefined' });
        const expected = EXPECTED_VALUES[escape.name];
        if (expected !== undefined) expect(value).toMatchObject(expected);
      }
      expectNoHostLeak(result);
      expect(JSON.stringify(bench.sink.events())).not.toMatch(/\/work\/|node_modules|node:internal/);
      expectSentinelsIntact();
      // Nothing of the hostile run reaches the host once it has ended: the next run makes exactly one call.
      const before = bench.calls.get('echo') ?? 0;
      expect(resultOf(await bench.run('return (await tools.echo({ value: 2 }) as any).value * 21'))).toBe(42);
      expect(bench.calls.get('echo')).toBe(before + 1);
    });
  });
}

suite('in-process', () => createInProcessRuntime({ warmPoolSize: 1, warmPoolMemoryMiB: 32 }), ESCAPE_CASES);
suite(
  'process',
  () => createProcessRuntime({ children: 1, runsPerChild: 64, warmPoolSize: 1, warmPoolMemoryMiB: 32, queueTimeoutMs: 60_000 }),
  ESCAPE_CASES.filter((c) => c.processRuntime === true),
);

it('the corpus has at least 30 attempts', () => {
  expect(ESCAPE_CASES.length).toBeGreaterThanOrEqual(30);
  expect(new Set(ESCAPE_CASES.map((c) => c.name)).size).toBe(ESCAPE_CASES.length);
});
