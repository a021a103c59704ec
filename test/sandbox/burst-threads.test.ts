/**
 * The in-process runtime's burst threads: runs of a burst go to worker
 * threads (the sandbox-child protocol over the thread transport), which
 * prepare isolates in parallel, while tools still run on this thread. A run
 * there must behave as it would here, and closing or losing a thread must not
 * take the process down.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { SandboxRuntime } from '../../src/sandbox-runtime.ts';
import { createInProcessRuntime, type InProcessRuntimeOptions } from '../../sandbox/in-process-runtime.ts';
import { SandboxChild } from '../../sandbox/process/sandbox-child.ts';
import { createFakeHost, failureOf, resultOf, type FakeHost } from './harness.ts';
import { ISOLATE_HOST_FLAGS } from '../../sandbox/host-flags.ts';

const routed = vi.spyOn(SandboxChild.prototype, 'run');
afterEach(() => routed.mockClear());
// Test files share this process: the next one gets the method back.
afterAll(() => routed.mockRestore());

/** A runtime with burst threads (warm isolates of 32 MiB) and a fake host on it, closed after `test`. */
async function withThreads(options: InProcessRuntimeOptions, test: (runtime: SandboxRuntime, host: FakeHost) => Promise<void>): Promise<void> {
  const runtime = createInProcessRuntime({ warmPoolMemoryMiB: 32, ...options });
  const host = createFakeHost(runtime);
  try {
    await test(runtime, host);
  } finally {
    await host.close();
  }
}

/** Runs `name` (a probe next to this file) in a process of its own; what it printed, parsed. */
async function runProbe(name: string, timeoutMs: number): Promise<unknown> {
  const probe = fileURLToPath(new URL(`./${name}`, import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [...ISOLATE_HOST_FLAGS, probe], { timeout: timeoutMs });
  return JSON.parse(stdout.trim()) as unknown;
}

describe('burst threads of the in-process runtime', () => {
  it('start with ready() and take the runs of a burst; tools, logs and results cross as on this thread', async () => {
    await withThreads({ warmPoolSize: 1, burstThreads: 2 }, async (runtime, host) => {
      expect(runtime.status().children).toBe(0);
      await runtime.ready();
      expect(runtime.status().children).toBe(2);
      const lines: string[] = [];
      const outcomes = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          host.run(`console.log('run ${i}'); const v = await tools.echo({ i: ${i} }); return [v.i, Object.isFrozen(v), typeof ivm];`, {
            tools: { echo: (args) => args },
            onLog: (line) => lines.push(line),
          }),
        ),
      );
      expect(outcomes.map(resultOf)).toEqual(Array.from({ length: 24 }, (_, i) => [i, true, 'undefined']));
      expect(outcomes.map((outcome) => outcome.logs)).toEqual(Array.from({ length: 24 }, (_, i) => [`run ${i}`]));
      expect(lines.sort()).toEqual(Array.from({ length: 24 }, (_, i) => `run ${i}`).sort());
      // The first 16 found at most 15 others waiting to start and started here; the rest were a burst.
      expect(routed).toHaveBeenCalledTimes(8);
      expect(host.calls).toHaveLength(24);
    });
  });

  it('counts runs waiting for admission as a burst', async () => {
    // One computing run at a time: the burst is admitted one run after another, as each reaches its tool call.
    await withThreads({ warmPoolSize: 0, maxActiveRuns: 1, burstThreads: 1 }, async (runtime, host) => {
      await runtime.ready();
      const outcomes = await Promise.all(Array.from({ length: 4 }, (_, i) => host.run(`return (await tools.echo({ i: ${i} })).i;`, { tools: { echo: (args) => args } })));
      expect(outcomes.map(resultOf)).toEqual([0, 1, 2, 3]);
      // The first started alone; the second and third while others waited for admission; the last alone again.
      expect(routed).toHaveBeenCalledTimes(2);
    });
  });

  it('keep each run to its own limits: a heap bomb fails memory, a spinner its timeout, an aborted run abort, the rest succeed', async () => {
    await withThreads({ warmPoolSize: 1, burstThreads: 2 }, async (runtime, host) => {
      await runtime.ready();
      const aborted = new AbortController();
      const runs = [
        // Sixteen runs waiting to start make the ones after them a burst.
        ...Array.from({ length: 16 }, () => host.run('return 0;')),
        host.run('const keep = []; for (;;) keep.push(new Array(1e5).fill(keep.length));', { limits: { memoryMiB: 16 } }),
        host.run('for (;;) {}', { limits: { timeoutMs: 300 } }),
        host.run('await tools.never({}); return 1;', { tools: { never: () => new Promise(() => undefined) }, signal: aborted.signal }),
        ...Array.from({ length: 4 }, (_, i) => host.run(`return (await tools.echo({ i: ${i} })).i + 1;`, { tools: { echo: (args) => args } })),
      ];
      while (host.calls.every((call) => call.name !== 'never')) await new Promise((resolve) => setImmediate(resolve));
      aborted.abort();
      const outcomes = await Promise.all(runs);
      expect(outcomes.slice(0, 16).map(resultOf)).toEqual(Array.from({ length: 16 }, () => 0));
      const [bomb, spinner, waiter, ...rest] = outcomes.slice(16);
      expect(failureOf(bomb!).kind).toBe('memory');
      expect(failureOf(spinner!)).toMatchObject({ kind: 'timeout' });
      expect(failureOf(waiter!).kind).toBe('abort');
      expect(rest.map(resultOf)).toEqual([1, 2, 3, 4]);
      expect(routed).toHaveBeenCalledTimes(7);
      // A thread survives its runs' failures: no replacement was needed.
      expect(runtime.status()).toMatchObject({ children: 2, restarts: 0 });
    });
  });

  it('are not started by a few runs at once: in a thread, each tool call would cross threads', async () => {
    await withThreads({ warmPoolSize: 1, burstThreads: 2 }, async (runtime, host) => {
      const outcomes = await Promise.all(Array.from({ length: 16 }, (_, i) => host.run(`return (await tools.echo({ i: ${i} })).i;`, { tools: { echo: (args) => args } })));
      expect(outcomes.map(resultOf)).toEqual(Array.from({ length: 16 }, (_, i) => i));
      expect(routed).not.toHaveBeenCalled();
      expect(runtime.status().children).toBe(0);
    });
  });

  it('are not started by runs that never overlap', async () => {
    await withThreads({ warmPoolSize: 1, burstThreads: 2 }, async (runtime, host) => {
      for (let i = 0; i < 3; i++) expect(resultOf(await host.run(`return ${i};`))).toBe(i);
      expect(runtime.status().children).toBe(0);
      expect(routed).not.toHaveBeenCalled();
    });
  });

  // In a process of its own: the fault it guards against (a thread torn down under live isolates) aborts the whole process.
  // The test waits as long as its probe may take: a probe that hangs fails with its own output, past its time.
  it('closed in every state, or losing a thread mid-run, settle every run and leave the process whole', { timeout: 130_000 }, async () => {
    const { ended, routed: routedRuns } = (await runProbe('burst-close.probe.ts', 120_000)) as { ended: Record<string, number>; routed: number };
    expect(Object.values(ended).reduce((sum, n) => sum + n, 0)).toBe(12 * 16);
    expect(Object.keys(ended).every((kind) => ['ok', 'busy', 'abort', 'crashed'].includes(kind))).toBe(true);
    expect(ended.ok).toBeGreaterThan(0);
    expect(routedRuns).toBeGreaterThan(0);
  });

  // In a process of its own: what is asserted is that the process ends without close().
  it('left idle and never closed, do not keep the process alive', { timeout: 70_000 }, async () => {
    expect(await runProbe('idle-threads.probe.ts', 60_000)).toEqual({ ok: 24, routed: 8 });
  });
});
