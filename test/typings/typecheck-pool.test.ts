import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { generateTypings } from '../../typings/generate.ts';
import { createTypecheckPool, TypecheckIncompleteError, type TypecheckPool, type TypecheckPoolOptions } from '../../typings/typecheck-pool.ts';
import { SMALL_TOOLS } from './fixtures.ts';
import { HOSTILE_TYPES } from './typecheck-hostile.ts';

const MISSPELT = 'const x = 1;\nconst file = await tools.raed({ path: "a" });\nreturn file;';

// One warm pool for most tests: starting a worker (loading TypeScript) takes seconds on a busy machine.
const shared = createTypecheckPool({ threads: 1, timeoutMs: 60_000 });
shared.warm();
afterAll(() => shared.close());

const pools: TypecheckPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});
function pool(options: TypecheckPoolOptions): TypecheckPool {
  const created = createTypecheckPool(options);
  pools.push(created);
  return created;
}

/** The rejection of `promise`, which must be a TypecheckIncompleteError. */
async function incomplete(promise: Promise<unknown>): Promise<TypecheckIncompleteError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(TypecheckIncompleteError);
  return error as TypecheckIncompleteError;
}

describe('type-check pool', () => {
  it('checks in a worker thread, with the positions and messages of the in-thread checker', async () => {
    const typings = await generateTypings(SMALL_TOOLS);
    const started = shared.started;
    const [diagnostic, ...rest] = await shared.check(MISSPELT, typings);
    expect(rest).toEqual([]);
    expect(diagnostic).toMatchObject({ line: 2, column: 26, code: 2339 });
    expect(await shared.check('return 1;', typings)).toEqual([]);
    expect(shared.started).toBe(started);
  });

  it('a hostile program over its time budget fails `timeout`; its worker is replaced and the next check is right', async () => {
    const checker = shared;
    const typings = await generateTypings(SMALL_TOOLS);
    await checker.check('return 1;', typings);
    const started = checker.started;
    const error = await incomplete(checker.check(HOSTILE_TYPES, typings, { timeoutMs: 300 }));
    expect(error.reason).toBe('timeout');
    expect(error.message).toMatch(/^the type-check did not finish within its 300 ms budget; simplify the program/);
    // The typings are sent again to the fresh worker.
    expect(await checker.check(MISSPELT, typings)).toMatchObject([{ line: 2, column: 26, code: 2339 }]);
    expect(checker.started).toBe(started + 1);
  });

  it('a hostile program over its heap budget fails `memory`, not the process; the next check is right', async () => {
    const checker = pool({ threads: 1, heapMiB: 128, timeoutMs: 120_000 });
    const typings = await generateTypings(SMALL_TOOLS);
    const error = await incomplete(checker.check(HOSTILE_TYPES, typings));
    expect(error.reason).toBe('memory');
    expect(error.message).toMatch(/^the type-check ran out of its 128 MiB memory budget; simplify the program/);
    expect(await checker.check(MISSPELT, typings)).toMatchObject([{ code: 2339 }]);
  });

  it("the run's signal ends a running check and its worker", async () => {
    const checker = shared;
    const typings = await generateTypings(SMALL_TOOLS);
    await checker.check('return 1;', typings);
    const started = checker.started;
    const controller = new AbortController();
    const pending = checker.check(HOSTILE_TYPES, typings, { signal: controller.signal });
    // Ends the check once the worker has it (the next turn of the loop, after the postMessage).
    setImmediate(() => controller.abort());
    expect((await incomplete(pending)).reason).toBe('aborted');
    expect(checker.started).toBe(started + 1);
    expect((await incomplete(checker.check('return 1;', typings, { signal: controller.signal }))).reason).toBe('aborted');
    expect(await checker.check('return 1;', typings)).toEqual([]);
  });

  it('a checker exception fails the check (`crashed`) without its message leaking a stack; the worker stays', async () => {
    const checker = shared;
    await checker.check('return 1;', '');
    const started = checker.started;
    const deep = `return ${'('.repeat(50_000)}1${')'.repeat(50_000)};`;
    const error = await incomplete(checker.check(deep, ''));
    expect(error.reason).toBe('crashed');
    expect(error.message).toBe(
      'the type-checker failed on this program (RangeError: Maximum call stack size exceeded); simplify the program (very deep nesting; huge unions, mapped or template-literal types over many members) and run it again',
    );
    expect(await checker.check('const n: number = "x";', '')).toMatchObject([{ code: 2322 }]);
    expect(checker.started).toBe(started);
  });

  it('queues checks beyond its threads, and follows a change of typings in every worker', async () => {
    const checker = pool({ threads: 2 });
    const all = await generateTypings(SMALL_TOOLS);
    const fewer = await generateTypings(SMALL_TOOLS.slice(1));
    const code = 'await tools.read({ path: "a" });';
    const results = await Promise.all([all, fewer, all, fewer, all, fewer].map((typings) => checker.check(code, typings)));
    expect(results.map((found) => found.map((d) => d.code))).toEqual([[], [2339], [], [2339], [], [2339]]);
    expect(checker.started).toBe(2);
  });

  it('checks that queue share a request, each with the diagnostics it gets alone', async () => {
    const typings = await generateTypings(SMALL_TOOLS);
    const programs = ['return 1;', MISSPELT, 'const n: number = "x";\nreturn n;', 'return await tools.read({ path: 1 });', 'let x = 1;\nx.foo();', 'return nope;'];
    const alone = [];
    for (const code of programs) alone.push(await shared.check(code, typings));
    expect(alone.map((found) => found.map((d) => d.code))).toEqual([[], [2339], [2322], [2322], [2339], [2304]]);
    const requests = shared.requests;
    // The first goes to the idle worker at once; the rest queue behind it and go together.
    expect(await Promise.all(programs.map((code) => shared.check(code, typings)))).toEqual(alone);
    expect(shared.requests - requests).toBe(2);
  });

  it('a program that breaks out of its wrapper is checked alone: what it declares reaches no other program', async () => {
    const typings = await generateTypings(SMALL_TOOLS);
    const escaping = 'return 1;\n}\ndeclare global { var injected: number }\nasync function again() {';
    const using = 'return injected;';
    const alone = [await shared.check(escaping, typings), await shared.check(using, typings)];
    expect(alone[1].map((d) => d.code)).toEqual([2304]);
    const together = await Promise.all(['return 1;', escaping, using].map((code) => shared.check(code, typings)));
    expect(together.slice(1)).toEqual(alone);
  });

  it('a hostile program in a shared request fails alone, past its budget; the others are checked again and answered', async () => {
    const checker = pool({ threads: 1, timeoutMs: 60_000 });
    const typings = await generateTypings(SMALL_TOOLS);
    await checker.check('return 1;', typings);
    const started = checker.started;
    const first = checker.check('return 1;', typings);
    const hostile = incomplete(checker.check(HOSTILE_TYPES, typings, { timeoutMs: 1_000 }));
    const others = Promise.all([MISSPELT, 'return nope;'].map((code) => checker.check(code, typings)));
    expect(await first).toEqual([]);
    expect((await hostile).reason).toBe('timeout');
    expect((await others).map((found) => found.map((d) => d.code))).toEqual([[2339], [2304]]);
    expect(checker.started).toBe(started + 1);
  });

  it('a checker exception in a shared request fails only the program that caused it; the thread stays', async () => {
    const typings = await generateTypings(SMALL_TOOLS);
    await shared.check('return 1;', typings);
    const started = shared.started;
    const requests = shared.requests;
    const deep = `return ${'('.repeat(50_000)}1${')'.repeat(50_000)};`;
    const first = shared.check('return 1;', typings);
    const thrown = incomplete(shared.check(deep, typings));
    const other = shared.check(MISSPELT, typings);
    expect(await first).toEqual([]);
    expect((await thrown).reason).toBe('crashed');
    expect((await other).map((d) => d.code)).toEqual([2339]);
    // The first alone, the two together, then each alone again.
    expect(shared.requests - requests).toBe(4);
    expect(shared.started).toBe(started);
  });

  it('a cancelled check leaves a shared request; its worker goes on for the others', async () => {
    const typings = await generateTypings(SMALL_TOOLS);
    await shared.check('return 1;', typings);
    const started = shared.started;
    const controller = new AbortController();
    const first = shared.check('return 1;', typings);
    const cancelled = incomplete(shared.check('return 2;', typings, { signal: controller.signal }));
    const other = shared.check(MISSPELT, typings);
    await first;
    // The two queued checks went to the worker together when the first was answered.
    controller.abort();
    expect((await cancelled).reason).toBe('aborted');
    expect((await other).map((d) => d.code)).toEqual([2339]);
    expect(shared.started).toBe(started);
  });

  it('a closed pool refuses checks', async () => {
    const checker = createTypecheckPool({ threads: 1 });
    await checker.close();
    expect((await incomplete(checker.check('return 1;', ''))).reason).toBe('unavailable');
  });
});
