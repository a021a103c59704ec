/**
 * Tool calls cross synchronously when the host answers within its turn, and
 * wait asynchronously otherwise: a tool that is still running holds no
 * isolated-vm thread. More runs than the machine has cores wait on slow calls
 * while other runs make fast calls to the end.
 */
import { availableParallelism } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { createFakeHost, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

describe('slow tools and the sync crossing', () => {
  it('runs waiting on unanswered calls do not stop other runs from finishing', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const parked = availableParallelism() + 2;
    let pending = 0;
    let allParked: () => void = () => undefined;
    const everyoneWaits = new Promise<void>((resolve) => (allParked = resolve));
    const tools = {
      slow: async () => {
        if (++pending === parked) allParked();
        await gate;
        return 'late';
      },
      fast: (args: unknown) => (args as { i: number }).i,
    };
    const waiters = Array.from({ length: parked }, () =>
      host.run('const a = await tools.slow({}); const b = await tools.slow({}); return a + b;', { tools }),
    );
    await everyoneWaits;
    const fast = await host.run('let s = 0; for (let i = 0; i < 50; i++) s += await tools.fast({ i }); return s;', { tools });
    // Every waiting run was still parked on its first slow call while the fast run finished.
    expect(resultOf(fast)).toBe(1225);
    expect(pending).toBe(parked);
    release();
    for (const outcome of await Promise.all(waiters)) expect(resultOf(outcome)).toBe('latelate');
  });

  it('a tool that answers within the turn and one that does not, in one Promise.all, both settle', async () => {
    const tools = {
      now: () => 1,
      later: () => new Promise((resolve) => setTimeout(() => resolve(2), 5)),
    };
    const outcome = await host.run('const r = await Promise.all([tools.now({}), tools.later({}), tools.now({})]); return r;', { tools });
    expect(resultOf(outcome)).toEqual([1, 2, 1]);
    const again = await host.run('let s = 0; for (let i = 0; i < 3; i++) s += (await tools.later({})) + (await tools.now({})); return s;', { tools });
    expect(resultOf(again)).toBe(9);
  });
});
