/**
 * The isolate factory: isolates constructed by helper isolates on
 * isolated-vm's thread pool, as the in-process runtime makes them under a
 * burst. They must be ordinary isolates (the heap asked for, nothing of the
 * helper reachable), a burst made through them must run like any other, and
 * closing a runtime mid-burst must not take the process down.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { isolateFactory } from '../../sandbox/isolate-factory.ts';
import { createFakeHost, resultOf } from './harness.ts';

const MiB = 1024 * 1024;

describe('isolateFactory', () => {
  it('makes isolates with the heap asked for, that run code', async () => {
    const made = await Promise.all([48, 48, 96, 96].map((mib) => isolateFactory().make(mib, () => undefined)));
    try {
      for (const [i, { isolate, context }] of made.entries()) {
        expect(context.evalSync('6 * 7')).toBe(42);
        const limit = isolate.getHeapStatisticsSync().heap_size_limit;
        const asked = i < 2 ? 48 : 96;
        // isolated-vm adds its own margin over the old generation it is given; never less.
        expect(limit).toBeGreaterThanOrEqual(asked * MiB);
        expect(limit).toBeLessThan((asked + 48) * MiB);
      }
    } finally {
      for (const { isolate } of made) isolate.dispose();
    }
  });

  it('leaves nothing of the helper reachable from a made isolate', async () => {
    const { isolate, context } = await isolateFactory().make(32, () => undefined);
    try {
      const found = context.evalSync(`typeof ivm + ' ' + Object.getOwnPropertyNames(globalThis).filter((name) => /ivm|make|onCatastrophe/i.test(name)).length`);
      expect(found).toBe('undefined 0');
    } finally {
      isolate.dispose();
    }
  });
});

describe('a burst on the in-process runtime', () => {
  it('runs every program, each isolate made by the factory (no warm pool, so all but the first are crowded)', async () => {
    const host = createFakeHost(createInProcessRuntime({ warmPoolSize: 0, warmPoolMemoryMiB: 32 }));
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 12 }, (_, i) => host.run(`const v = await tools.echo({ i: ${i} }); return [v.i, typeof ivm];`, { tools: { echo: (args) => args } })),
      );
      expect(outcomes.map(resultOf)).toEqual(Array.from({ length: 12 }, (_, i) => [i, 'undefined']));
    } finally {
      await host.close();
    }
  });

  it('counts runs waiting for admission as a burst: their isolates come from the factory, not from this thread', async () => {
    // One computing run at a time: the burst is admitted one run after another, as each reaches its tool call.
    const host = createFakeHost(createInProcessRuntime({ warmPoolSize: 0, warmPoolMemoryMiB: 32, maxActiveRuns: 1 }));
    const make = vi.spyOn(isolateFactory(), 'make');
    try {
      const outcomes = await Promise.all(Array.from({ length: 4 }, (_, i) => host.run(`return (await tools.echo({ i: ${i} })).i;`, { tools: { echo: (args) => args } })));
      expect(outcomes.map(resultOf)).toEqual([0, 1, 2, 3]);
      // Each of the first three started while others still waited for admission; the last started alone.
      expect(make).toHaveBeenCalledTimes(3);
    } finally {
      make.mockRestore();
      await host.close();
    }
  });

  // In a process of its own: the fault it guards against is a SIGSEGV of the whole process.
  it('closed while its isolates are still being made, settles every run and leaves the process whole', async () => {
    const probe = fileURLToPath(new URL('./burst-close.probe.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--no-node-snapshot', probe], { timeout: 60_000 });
    const ended = JSON.parse(stdout.trim()) as Record<string, number>;
    expect(Object.values(ended).reduce((sum, n) => sum + n, 0)).toBe(20 * 16);
    expect(Object.keys(ended).every((kind) => kind === 'ok' || kind === 'crashed')).toBe(true);
  });
});
