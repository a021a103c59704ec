import { afterEach, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { createToolRegistry } from '../../src/registry.ts';
import { createCodeModeCore } from '../../src/code-mode/code-mode.ts';
import { createTypingsService } from '../../typings/service.ts';
import { HOSTILE_TYPES, ISSUE_PROGRAM } from '../typings/typecheck-hostile.ts';
import { createBench, sharedRuntime, valueOf, type Bench } from './harness.ts';

let bench: Bench;
afterEach(() => bench.close());

const typings = createTypingsService();
let calls = 0;
const count = defineTool({
  name: 'count',
  description: 'Counts.',
  parameters: { by: { type: 'integer', required: true } },
  output: { schema: { type: 'integer' }, render: (_a, v) => [{ type: 'text', text: String(v) }] },
  async execute(args) {
    calls++;
    return args.by;
  },
});

it("'enforce' fails with kind typecheck before any tool runs, each diagnostic at line:col with a code frame", async () => {
  bench = createBench({ typings, typecheck: 'enforce' });
  bench.registry.register(count);
  calls = 0;
  const result = await bench.runCode('await tools.count({ by: 1 });\nconst n: number = await tools.count({ by: "two" });\nreturn n;');
  expect(calls).toBe(0);
  expect(result.isError).toBe(true);
  if (!result.isError) return;
  expect(result.error.info?.code).toBe('CODE_RUN_FAILED');
  expect(result.error.message).toMatch(/^code run failed \(typecheck\): 1 type error; nothing ran/);
  expect(result.error.message).toMatch(/agent\.ts:2:\d+ - error TS2322: /);
  expect(result.error.message).toMatch(/> 2 \| const n: number = await tools\.count\(\{ by: "two" \}\);/);
}, 60_000);

it("'warn' runs the program and puts the diagnostics at the top of the logs", async () => {
  bench = createBench({ typings, typecheck: 'warn' });
  bench.registry.register(count);
  const result = await bench.runCode('const label: string = await tools.count({ by: 2 });\nconsole.log("ran");\nreturn label;');
  const value = valueOf(result);
  expect(value.result).toBe(2);
  expect(value.logs).toHaveLength(2);
  expect(value.logs[0]).toMatch(/^\[typecheck\] agent\.ts:1:7 - error TS2322: /);
  expect(value.logs[1]).toBe('ran');
}, 60_000);

it('a clean program runs unchanged under enforce', async () => {
  bench = createBench({ typings, typecheck: 'enforce' });
  bench.registry.register(count);
  expect(valueOf(await bench.runCode('const n: number = await tools.count({ by: 3 });\nreturn n * 2;'))).toEqual({ logs: [], result: 6 });
}, 60_000);

it('typecheck without a typings service is refused at creation', () => {
  expect(() => createCodeModeCore({ registry: createToolRegistry(), runtime: sharedRuntime(), typecheck: 'warn' })).toThrow(/needs a typings service/);
});

describe('a check that does not complete', () => {
  it("'enforce' fails a program that explodes the checker (kind typecheck, nothing ran); the next run is checked as usual", async () => {
    bench = createBench({ typings, typecheck: 'enforce' });
    bench.registry.register(count);
    calls = 0;
    const result = await bench.runCode(`await tools.count({ by: 1 });\n${HOSTILE_TYPES}`, { timeoutMs: 1_000 });
    expect(calls).toBe(0);
    expect(result.isError).toBe(true);
    if (!result.isError) return;
    expect(result.error.info?.code).toBe('CODE_RUN_FAILED');
    expect(result.error.message).toMatch(
      /^code run failed \(typecheck\): the program could not be type-checked, so nothing ran: the type-check did not finish within its 1000 ms budget; simplify the program/,
    );
    const misspelt = await bench.runCode('return await tools.cuont({ by: 1 });');
    expect(misspelt.isError && misspelt.error.message).toMatch(/^code run failed \(typecheck\): 1 type error; nothing ran/);
    expect(valueOf(await bench.runCode('return await tools.count({ by: 4 });'))).toEqual({ logs: [], result: 4 });
  }, 60_000);

  it("'enforce' fails the issue's own program, whichever way the checker ends", async () => {
    bench = createBench({ typings, typecheck: 'enforce' });
    bench.registry.register(count);
    calls = 0;
    const result = await bench.runCode(`await tools.count({ by: 1 });\n${ISSUE_PROGRAM}`, { timeoutMs: 5_000 });
    expect(calls).toBe(0);
    expect(result.isError && result.error.message).toMatch(/^code run failed \(typecheck\): /);
  }, 60_000);

  it("'enforce' fails a program the checker throws on; it never passes unchecked", async () => {
    bench = createBench({ typings, typecheck: 'enforce' });
    bench.registry.register(count);
    calls = 0;
    const result = await bench.runCode(`await tools.count({ by: 1 });\nreturn ${'('.repeat(50_000)}1${')'.repeat(50_000)};`);
    expect(calls).toBe(0);
    // The checker's sentence is pinned in test/typings/typecheck-pool.test.ts; here, the run's kind and prefix.
    expect(result.isError && result.error.info).toMatchObject({ code: 'CODE_RUN_FAILED', kind: 'typecheck' });
    expect(result.isError && result.error.message).toMatch(/^code run failed \(typecheck\): the program could not be type-checked, so nothing ran: the type-checker failed on this program/);
  }, 60_000);

  it("'warn' gives the check half the run's time, then runs the program with a line saying it is unchecked", async () => {
    bench = createBench({ typings, typecheck: 'warn' });
    bench.registry.register(count);
    const value = valueOf(await bench.runCode(`${HOSTILE_TYPES}\nconsole.log("ran");\nreturn await tools.count({ by: 5 });`, { timeoutMs: 2_000 }));
    expect(value.result).toBe(5);
    expect(value.logs).toEqual([
      // Whichever budget the hostile types exhaust first: the time (half of 2 s, under the check's own
      // 2.5 s or more) or the checker's heap.
      expect.stringMatching(/^\[typecheck\] not checked, the program ran anyway: the type-check (did not finish within its 1000 ms budget|ran out of its 512 MiB memory budget); simplify the program/),
      'ran',
    ]);
  }, 60_000);
});
