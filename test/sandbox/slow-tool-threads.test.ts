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

  it('replies of every size around what one synchronous crossing carries arrive whole, alone and in bursts', async () => {
    // Sizes in UTF-16 code units around 8 Ki (the crossing's 16 KiB), with characters of one, two and four UTF-8 bytes.
    const text = (units: number): string => 'aé😀'.repeat(Math.ceil(units / 4)).slice(0, units).replace(/\uD83D$/, 'b');
    const tools = { sized: (args: unknown) => text((args as { units: number }).units) };
    const sizes = [1, 4000, 8150, 8170, 8180, 8190, 8200, 20_000, 100_000];
    const sequential = await host.run(
      `const out = []; for (const units of ${JSON.stringify(sizes)}) { const t = await tools.sized({ units }); out.push([t.length, t.slice(-3)]); } return out;`,
      { tools },
    );
    expect(resultOf(sequential)).toEqual(sizes.map((units) => [units, text(units).slice(-3)]));
    const burst = await host.run(`const all = await Promise.all(${JSON.stringify(sizes)}.map((units) => tools.sized({ units }))); return all.map((t) => t.length);`, { tools });
    expect(resultOf(burst)).toEqual(sizes);
    const exact = await host.run('const t = await tools.sized({ units: 100000 }); return t === ' + JSON.stringify(text(100_000)) + ';', { tools });
    expect(resultOf(exact)).toBe(true);
  });
});
