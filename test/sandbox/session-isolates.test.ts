/**
 * Isolates kept between the runs of one session (sandbox/session-isolates.ts,
 * recycleIsolate in sandbox/isolate-run.ts), in the in-process runtime: a
 * session's next run takes its last run's isolate in a fresh context, and
 * only when nothing of the last run can reach it. The process runtime's
 * routing of a session to its child is in process-session-isolates.test.ts.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createCodeModeCore } from '../../src/code-mode/code-mode.ts';
import { defineTool } from '../../src/define-tool.ts';
import { createToolRegistry } from '../../src/registry.ts';
import type { SandboxCallOutcome, SandboxRunOutcome, SandboxRuntime } from '../../src/sandbox-runtime.ts';
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { prepareIsolate, runInIsolate, type PreparedIsolate } from '../../sandbox/isolate-run.ts';
import { SessionIsolates } from '../../sandbox/session-isolates.ts';
import { stripProgram } from '../../sandbox/strip-types.ts';
import { resultOf, testLimits } from './harness.ts';
import type { JsonValue } from '../../src/json.ts';

type Tool = (args: unknown) => unknown;

function runner(runtime: SandboxRuntime, memoryMiB = testLimits.memoryMiB) {
  return (code: string, sessionId: string | undefined, tools: Record<string, Tool> = {}, timeoutMs = testLimits.timeoutMs): Promise<SandboxRunOutcome> =>
    runtime.run({
      code,
      toolNames: Object.keys(tools),
      ...(sessionId === undefined ? {} : { sessionId }),
      async callTool(name, argsJson): Promise<SandboxCallOutcome> {
        const value = await (tools[name] as Tool)(JSON.parse(argsJson));
        return { ok: true, value: value as JsonValue };
      },
      limits: { ...testLimits, memoryMiB, timeoutMs },
      signal: new AbortController().signal,
    });
}

const reused = (runtime: SandboxRuntime): number => runtime.status().isolatesReused ?? 0;

describe('isolates kept for a session (in-process runtime)', () => {
  const runtime = createInProcessRuntime({ warmPoolSize: 1, warmPoolMemoryMiB: testLimits.memoryMiB, burstThreads: 0, sessionIsolates: 16 });
  const run = runner(runtime);
  afterAll(() => runtime.close());

  it("takes the isolate of the session's last run, with a fresh context: nothing the last program changed is seen", async () => {
    const before = reused(runtime);
    const first = await run(
      `globalThis.leak = 'secret';
       Object.prototype.polluted = 'yes';
       Array.prototype.push = () => 0;
       JSON.stringify = () => 'hijacked';
       Object.defineProperty(globalThis, 'trap', { get() { throw new Error('trap'); } });
       const value = await tools.echo({ n: 1 });
       return value.n;`,
      'fresh-context',
      { echo: (args) => args },
    );
    expect(resultOf(first)).toBe(1);
    const second = await run(
      `const list = []; list.push(1);
       const value = await tools.echo({ n: 2 });
       return { leak: typeof leak, trap: typeof globalThis.trap, polluted: ({}).polluted ?? null, pushed: list.length, json: JSON.stringify({ a: 1 }), n: value.n, frozen: Object.isFrozen(value) };`,
      'fresh-context',
      { echo: (args) => args },
    );
    expect(resultOf(second)).toEqual({ leak: 'undefined', trap: 'undefined', polluted: null, pushed: 1, json: '{"a":1}', n: 2, frozen: true });
    expect(reused(runtime)).toBe(before + 1);
  });

  it('never lends an isolate to another session, nor to a run without one', async () => {
    await run('return 1', 'owner');
    const before = reused(runtime);
    expect(resultOf(await run('return 2', 'stranger'))).toBe(2);
    expect(resultOf(await run('return 3', undefined))).toBe(3);
    expect(reused(runtime)).toBe(before);
    // The owner's isolate was kept all along.
    expect(resultOf(await run('return 4', 'owner'))).toBe(4);
    expect(reused(runtime)).toBe(before + 1);
  });

  it('keeps the isolate of a run whose program threw, and the next run is unaffected', async () => {
    const failed = await run('globalThis.x = 1; throw new TypeError("bad")', 'threw');
    expect(failed).toMatchObject({ ok: false, failure: { kind: 'exception' } });
    const before = reused(runtime);
    expect(resultOf(await run('return typeof x', 'threw'))).toBe('undefined');
    expect(reused(runtime)).toBe(before + 1);
  });

  it.each([
    ['a FinalizationRegistry', 'new FinalizationRegistry(() => { for (;;); }).register({}, 1);'],
    ['a FinalizationRegistry made through its prototype', 'new FinalizationRegistry.prototype.constructor(() => { for (;;); }).register({}, 1);'],
    ['a subclass of FinalizationRegistry', 'class Mine extends FinalizationRegistry {} new Mine(() => { for (;;); }).register({}, 1);'],
    ['Atomics.waitAsync', 'Atomics.waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10).value.then(() => { for (;;); });'],
  ])('does not reuse an isolate whose program scheduled code for later with %s', async (_label, code) => {
    expect(resultOf(await run(`${code} return 'ok';`, 'later'))).toBe('ok');
    const before = reused(runtime);
    expect(resultOf(await run('return 1', 'later'))).toBe(1);
    expect(reused(runtime)).toBe(before);
  });

  it('keeps those built-ins working', async () => {
    const outcome = await run(
      `const registry = new FinalizationRegistry(() => undefined);
       registry.register({}, 'held');
       class Mine extends FinalizationRegistry {}
       const waited = Atomics.waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 1).value;
       return [registry instanceof FinalizationRegistry, new Mine(() => 0) instanceof FinalizationRegistry, FinalizationRegistry.prototype.constructor === FinalizationRegistry, waited];`,
      'builtins',
    );
    expect(resultOf(outcome)).toEqual([true, true, true, 'not-equal']);
  });

  it('does not reuse the isolate of a run that left a tool call running', async () => {
    let release: (value: unknown) => void = () => undefined;
    const pending = new Promise((resolve) => (release = resolve));
    const outcome = await run("tools.wait({}); return 'left';", 'left-running', { wait: () => pending });
    expect(resultOf(outcome)).toBe('left');
    const before = reused(runtime);
    expect(resultOf(await run('return 1', 'left-running'))).toBe(1);
    expect(reused(runtime)).toBe(before);
    release({});
  });

  it('does not reuse the isolate of a program whose microtasks never end after it returned (its run times out)', async () => {
    const outcome = await run("const spin = () => { Promise.resolve().then(spin); }; spin(); return 'returned';", 'spinning', {}, 300);
    // isolated-vm hands the result over once the microtasks have run: they never finish.
    expect(outcome).toMatchObject({ ok: false, failure: { kind: 'timeout' } });
    const before = reused(runtime);
    expect(resultOf(await run('return 1', 'spinning'))).toBe(1);
    expect(reused(runtime)).toBe(before);
  });

  it('does not reuse the isolate of a run that timed out, nor one that holds much heap', async () => {
    const timedOut = await run('for (;;);', 'heavy', {}, 200);
    expect(timedOut).toMatchObject({ ok: false, failure: { kind: 'timeout' } });
    let before = reused(runtime);
    expect(resultOf(await run('globalThis.kept = new Array(3e6).fill(1.5); return kept.length', 'heavy'))).toBe(3e6);
    expect(reused(runtime)).toBe(before);
    before = reused(runtime);
    expect(resultOf(await run('return typeof kept', 'heavy'))).toBe('undefined');
    expect(reused(runtime)).toBe(before);
  });

  it("passes run_code's session to the runtime", async () => {
    const registry = createToolRegistry();
    registry.register(
      defineTool({
        name: 'echo',
        description: 'Echoes n.',
        parameters: { n: { type: 'number', required: true } },
        output: { schema: { type: 'json' }, render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) }] },
        execute: async (args) => args.n,
      }),
    );
    const codeMode = createCodeModeCore({ registry, runtime });
    try {
      const before = reused(runtime);
      for (const n of [1, 2]) {
        const result = await registry.dispatch({ name: 'run_code', arguments: { code: `return await tools.echo({ n: ${n} })`, description: 'echo' }, sessionId: 'dispatched' });
        expect(result.isError).toBe(false);
      }
      expect(reused(runtime)).toBe(before + 1);
      // Without a sessionId a call is in session `default`, every such caller's: its runs keep no isolate.
      const unnamed = reused(runtime);
      for (const n of [3, 4, 5]) {
        const result = await registry.dispatch({ name: 'run_code', arguments: { code: `return await tools.echo({ n: ${n} })`, description: 'echo' } });
        expect(result.isError).toBe(false);
      }
      expect(reused(runtime)).toBe(unnamed);
      // Named `default` explicitly (as the service names it), the session keeps its isolate.
      for (const n of [6, 7]) {
        const result = await registry.dispatch({ name: 'run_code', arguments: { code: `return await tools.echo({ n: ${n} })`, description: 'echo' }, sessionId: 'default' });
        expect(result.isError).toBe(false);
      }
      expect(reused(runtime)).toBe(unnamed + 1);
    } finally {
      await codeMode.close();
    }
  });
});

describe('isolates of 128 MiB or more, kept after a sweep past the small heap bound', () => {
  const runtime = createInProcessRuntime({ warmPoolSize: 1, warmPoolMemoryMiB: 128, burstThreads: 0, sessionIsolates: 16 });
  const run = runner(runtime, 128);
  afterAll(() => runtime.close());
  /** About 2 MB of JSON: its parse and the program's copy leave far more than 8 MiB in use. */
  const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `row-${i}`, tags: ['a', 'b'], note: 'x'.repeat(40) }));

  it("keeps the isolate of a run that received a big value, and the next run sees nothing of it", async () => {
    const before = reused(runtime);
    const first = await run('globalThis.rows = await tools.rows({}); globalThis.copy = JSON.parse(JSON.stringify(rows)); return rows.length;', 'big-value', { rows: () => rows });
    expect(resultOf(first)).toBe(20_000);
    // Kept (not claimed by a run waiting for it): its pages count in the status.
    await runtime.ready();
    expect(runtime.status().keptIsolateBytes).toBeGreaterThan(0);
    const second = await run('const again = await tools.rows({}); return [typeof globalThis.rows, typeof globalThis.copy, again.length, Object.isFrozen(again[0].tags)];', 'big-value', {
      rows: () => rows,
    });
    expect(resultOf(second)).toEqual(['undefined', 'undefined', 20_000, true]);
    expect(reused(runtime)).toBe(before + 1);
  });

  it('leaves a swept isolate its whole heap: a program that fits a fresh one fits it', async () => {
    await run('globalThis.rows = await tools.rows({}); globalThis.held = new Array(2e6).fill(1.5); return held.length;', 'room', { rows: () => rows });
    const before = reused(runtime);
    // 80 MB of live doubles in a 128 MiB heap, the last run's values now garbage.
    expect(resultOf(await run('const held = []; for (let i = 0; i < 10; i++) held.push(new Array(1e6).fill(i + 0.5)); return held.length;', 'room'))).toBe(10);
    expect(reused(runtime)).toBe(before + 1);
  });

  it("keeps none past a quarter of the runtime's memory budget", async () => {
    const small = createInProcessRuntime({ warmPoolSize: 1, warmPoolMemoryMiB: 128, burstThreads: 0, sessionIsolates: 16, memoryBudgetMiB: 16 });
    try {
      const runSmall = runner(small, 128);
      const program = 'globalThis.rows = await tools.rows({}); globalThis.copy = JSON.parse(JSON.stringify(rows)); return rows.length;';
      expect(resultOf(await runSmall(program, 'tight', { rows: () => rows }))).toBe(20_000);
      // Recycled and offered to the kept isolates (a run arriving meanwhile would take it straight away).
      await small.ready();
      expect(small.status().keptIsolateBytes).toBe(0);
      expect(resultOf(await runSmall('return 1', 'tight'))).toBe(1);
      expect(reused(small)).toBe(0);
    } finally {
      await small.close();
    }
  });

  it('disposes an isolate whose heap pages pass the sweep bound, or whose run received no big value', async () => {
    await run('globalThis.rows = await tools.rows({}); globalThis.held = new Array(9e6).fill(1.5); return held.length;', 'heavier', { rows: () => rows });
    let before = reused(runtime);
    expect(resultOf(await run('return typeof globalThis.held', 'heavier'))).toBe('undefined');
    expect(reused(runtime)).toBe(before);
    await run('globalThis.held = new Array(2e6).fill(1.5); return held.length;', 'own-data');
    before = reused(runtime);
    expect(resultOf(await run('return typeof globalThis.held', 'own-data'))).toBe('undefined');
    expect(reused(runtime)).toBe(before);
  });
});

it.each([
  [undefined, 2],
  [0, 0],
] as const)('with sessionIsolates %s, a session of three runs reuses its isolate %s times', async (sessionIsolates, expected) => {
  const runtime = createInProcessRuntime({ warmPoolSize: 1, warmPoolMemoryMiB: testLimits.memoryMiB, burstThreads: 0, ...(sessionIsolates === undefined ? {} : { sessionIsolates }) });
  try {
    const run = runner(runtime);
    for (let i = 0; i < 3; i++) expect(resultOf(await run(`return ${i}`, 'one'))).toBe(i);
    await expect.poll(() => reused(runtime)).toBe(expected);
  } finally {
    await runtime.close();
  }
});

describe('SessionIsolates', () => {
  /** An isolate whose run ended cleanly, as runInIsolate hands it to RunControl.recycle. */
  async function ended(): Promise<PreparedIsolate> {
    const stripped = await stripProgram('return 1', 'agent.ts');
    if (!stripped.ok) throw new Error('strip failed');
    const prepared = await prepareIsolate(testLimits.memoryMiB);
    let handed: PreparedIsolate | undefined;
    const outcome = await runInIsolate(
      prepared,
      stripped.js,
      { code: 'return 1', toolNames: [], callTool: () => Promise.reject(new Error('no tools')), limits: testLimits, signal: new AbortController().signal },
      { recycle: (isolate) => (handed = isolate) },
    );
    expect(resultOf(outcome)).toBe(1);
    if (handed === undefined) throw new Error('the run did not hand its isolate over');
    return handed;
  }

  it('keeps at most `limit` isolates, dropping the least recently kept', async () => {
    const store = new SessionIsolates({ limit: 2, maxBytes: Infinity, idleMs: 60_000, offThread: false });
    try {
      for (const session of ['a', 'b', 'c']) await store.offer(session, await ended());
      expect(store.size).toBe(2);
      expect(await store.take('a', testLimits.memoryMiB)).toBeUndefined();
      const kept = await store.take('b', testLimits.memoryMiB);
      expect(kept?.isolate.isDisposed).toBe(false);
      expect(await store.take('c', 999)).toBeUndefined();
      expect(store.reused).toBe(1);
      kept?.isolate.dispose();
    } finally {
      await store.close();
    }
  });

  it('keeps isolates while their heap pages fit `maxBytes`, dropping the least recently kept', async () => {
    const probe = await ended();
    const oneIsolate = probe.isolate.getHeapStatisticsSync().total_physical_size;
    probe.isolate.dispose();
    // Room for one isolate, not two (a recycled one holds about what a fresh one does).
    const store = new SessionIsolates({ limit: 16, maxBytes: oneIsolate * 1.5, idleMs: 60_000, offThread: false });
    try {
      for (const session of ['a', 'b']) await store.offer(session, await ended());
      expect(store.size).toBe(1);
      expect(await store.take('a', testLimits.memoryMiB)).toBeUndefined();
      const kept = await store.take('b', testLimits.memoryMiB);
      expect(kept?.isolate.isDisposed).toBe(false);
      kept?.isolate.dispose();
    } finally {
      await store.close();
    }
  });

  it('disposes an offered isolate at once while `limit` recycles are under way', async () => {
    const store = new SessionIsolates({ limit: 1, maxBytes: Infinity, idleMs: 60_000, offThread: false });
    try {
      const [first, second] = [await ended(), await ended()];
      const recycling = store.offer('a', first);
      await store.offer('b', second);
      expect(second.isolate.isDisposed).toBe(true);
      await recycling;
      expect(store.size).toBe(1);
      expect(first.isolate.isDisposed).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('settles once the recycles under way are done: the isolates are kept by then', async () => {
    const store = new SessionIsolates({ limit: 4, maxBytes: Infinity, idleMs: 60_000, offThread: true });
    try {
      const [first, second] = [await ended(), await ended()];
      void store.offer('a', first);
      void store.offer('b', second);
      expect(store.size).toBe(0);
      await store.settled();
      expect(store.size).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('hands a run the isolate its session is still recycling', async () => {
    const store = new SessionIsolates({ limit: 4, maxBytes: Infinity, idleMs: 60_000, offThread: true });
    try {
      const offered = store.offer('s', await ended());
      const taken = await store.take('s', testLimits.memoryMiB);
      await offered;
      expect(taken?.isolate.isDisposed).toBe(false);
      expect(store.size).toBe(0);
      taken?.isolate.dispose();
    } finally {
      await store.close();
    }
  });

  it('disposes isolates left unused for idleMs, and all of them on clear', async () => {
    const store = new SessionIsolates({ limit: 4, maxBytes: Infinity, idleMs: 20, offThread: false });
    const first = await ended();
    await store.offer('idle', first);
    await vi.waitFor(() => expect(store.size).toBe(0));
    const second = await ended();
    await store.offer('cleared', second);
    expect(store.size).toBe(1);
    store.clear();
    expect(store.size).toBe(0);
    expect(second.isolate.isDisposed).toBe(true);
    await store.close();
  });
});
