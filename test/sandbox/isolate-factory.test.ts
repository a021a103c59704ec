/**
 * The isolate factory: isolates constructed by helper isolates on
 * isolated-vm's thread pool, as the in-process runtime makes them under a
 * burst. They must be ordinary isolates (the heap asked for, nothing of the
 * helper reachable) and a burst made through them must run like any other.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { createIsolateFactory, type IsolateFactory } from '../../sandbox/isolate-factory.ts';
import { createFakeHost, resultOf } from './harness.ts';

const MiB = 1024 * 1024;

describe('createIsolateFactory', () => {
  let factory: IsolateFactory | undefined;
  afterEach(() => factory?.close());

  it('makes isolates with the heap asked for, on every helper, that run code', async () => {
    factory = createIsolateFactory(2);
    const made = await Promise.all([48, 48, 96, 96].map((mib) => factory!.make(mib, () => undefined)));
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
    factory = createIsolateFactory(1);
    const { isolate, context } = await factory.make(32, () => undefined);
    try {
      expect(context.evalSync(`typeof ivm + ' ' + Object.getOwnPropertyNames(globalThis).filter((name) => /ivm|make|onCatastrophe/i.test(name)).length`)).toBe('undefined 0');
    } finally {
      isolate.dispose();
    }
  });

  it('refuses to make isolates once closed, and leaves those it made usable', async () => {
    factory = createIsolateFactory(1);
    const { isolate, context } = await factory.make(32, () => undefined);
    factory.close();
    try {
      await expect(factory.make(32, () => undefined)).rejects.toThrow(/closed/);
      expect(context.evalSync('"still " + "here"')).toBe('still here');
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
});
