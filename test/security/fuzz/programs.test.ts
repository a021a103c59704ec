/**
 * Random programs of stub calls with random (valid and invalid) arguments,
 * awaited in random ways: every run ends in a success or a typed failure of
 * the program's own making, never `crashed`, never past its deadline, never
 * with a host path; the host serves at most one call per call site; and the
 * runtime keeps serving. Fixed seed, bounded runs.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createInProcessRuntime } from '../../../sandbox/in-process-runtime.ts';
import type { SandboxRuntime } from '../../../src/sandbox-runtime.ts';
import { createSecurityBench, expectNoHostLeak, kindOf, resultOf, type SecurityBench } from '../harness.ts';

const ARGS = [
  '{}',
  'null',
  '1',
  '"text"',
  '[]',
  '{ value: undefined }',
  '{ value: 1n }',
  '{ value: NaN }',
  '{ value: -0 }',
  '{ value: [1, , 2] }',
  '{ value: new Date(0) }',
  '{ value: new Map() }',
  '{ get value() { throw new Error("getter") } }',
  'new Proxy({}, { ownKeys() { throw new Error("trap") } })',
  '{ ms: 1 }',
  '{ ms: "soon" }',
  '{ ms: 1.5 }',
  '{ extra: true }',
  'Object.create(null)',
];

const TOOLS = ['echo', 'nested', 'fail', 'slow', 'missing', '__proto__', 'constructor'];
const MODES = ['try', 'await', 'all', 'forget', 'then'] as const;

const arg = fc.oneof(
  fc.constantFrom(...ARGS),
  fc.jsonValue({ maxDepth: 3 }).map((json) => `{ value: ${JSON.stringify(json)} }`),
);
const statement = fc.record({ tool: fc.constantFrom(...TOOLS), arg, mode: fc.constantFrom(...MODES) });

function program(statements: { tool: string; arg: string; mode: (typeof MODES)[number] }[]): string {
  const lines = ['const out: unknown[] = [];', 'const t: any = tools;'];
  statements.forEach(({ tool, arg: a, mode }, i) => {
    const call = `t[${JSON.stringify(tool)}](${a})`;
    switch (mode) {
      case 'try':
        lines.push(`try { out.push(await ${call}); } catch (e: any) { out.push(e instanceof ToolCallError ? e.code : String(e)); }`);
        break;
      case 'await':
        lines.push(`out.push(await ${call});`);
        break;
      case 'all':
        lines.push(`out.push(...(await Promise.allSettled([${call}, ${call}])).map((s) => s.status));`);
        break;
      case 'forget':
        lines.push(`try { ${call}; } catch {}`);
        break;
      case 'then':
        lines.push(`await Promise.resolve().then(() => ${call}).then((v) => out.push(v), (e) => out.push(String(e && e.code)));`);
        break;
    }
    if (i % 3 === 2) lines.push('console.log(out.length);');
  });
  lines.push('return out.length;');
  return lines.join('\n');
}

let runtime: SandboxRuntime;
let bench: SecurityBench;
beforeAll(() => {
  runtime = createInProcessRuntime({ warmPoolSize: 1, warmPoolMemoryMiB: 32 });
  bench = createSecurityBench(runtime, { memoryMiB: 32 });
});
afterAll(async () => {
  await bench.close();
  await runtime.close();
});

it('random programs of stub calls never crash the runtime', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(statement, { minLength: 1, maxLength: 8 }), async (statements) => {
      const sites = statements.reduce((n, s) => n + (s.mode === 'all' ? 2 : 1), 0);
      const served = () => [...bench.calls.values()].reduce((a, b) => a + b, 0);
      const before = served();
      const result = await bench.run(program(statements), 10_000);
      const kind = kindOf(result);
      expect(['exception', undefined]).toContain(kind);
      expectNoHostLeak(result);
      expect(served() - before).toBeLessThanOrEqual(sites);
    }),
    { seed: 424242, numRuns: 80 },
  );
  expect(resultOf(await bench.run('return (await tools.echo({ value: 7 }) as any).value'))).toBe(7);
});
