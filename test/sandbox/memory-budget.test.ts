/**
 * Admission by memory budget, in both runtimes: runs are admitted while their
 * reservations fit, the rest queue and start as headroom frees, and when
 * admitted runs outgrow the budget the one that grew most fails `memory`
 * while the others finish.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxCallOutcome, SandboxLimits, SandboxRunOutcome, SandboxRunRequest, SandboxRuntime } from '../../src/sandbox-runtime.ts';
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { createProcessRuntime } from '../../sandbox/process/process-runtime.ts';
import { RUNTIME_NAMES, type RuntimeName } from '../helpers/runtimes.ts';
import { deferred } from './process-helpers.ts';

// Generous: a loaded machine must not turn a parked run into a timeout.
const limits: SandboxLimits = { timeoutMs: 120_000, memoryMiB: 128, maxLogBytes: 1 << 20, maxResultBytes: 1 << 20, maxArgBytes: 1 << 20 };

interface Budget {
  memoryBudgetMiB: number;
  runReserveMiB: number;
  queueLimit?: number;
}

function runtimeOf(name: RuntimeName, budget: Budget): SandboxRuntime {
  const queue = { queueLimit: budget.queueLimit ?? 10, queueTimeoutMs: 120_000 };
  return name === 'process'
    ? createProcessRuntime({ children: 1, warmPoolSize: 1, memoryBudgetMiB: budget.memoryBudgetMiB, runReserveMiB: budget.runReserveMiB, ...queue })
    : createInProcessRuntime({ warmPoolSize: 1, memoryBudgetMiB: budget.memoryBudgetMiB, runReserveMiB: budget.runReserveMiB, ...queue });
}

/**
 * Tools for the programs: `park` waits until `release`, `tick` answers at
 * once. `parked(n)` resolves once `n` calls to `park` have arrived; `order`
 * lists the `label` argument of each `park` call as it arrived.
 */
function parkingLot() {
  const gate = deferred<SandboxCallOutcome>();
  const order: string[] = [];
  const watchers: Array<{ count: number; resolve(): void }> = [];
  const callTool: SandboxRunRequest['callTool'] = async (name, argsJson) => {
    if (name !== 'park') return { ok: true, valueJson: '0' };
    order.push((JSON.parse(argsJson) as { label: string }).label);
    for (const watcher of watchers) if (order.length >= watcher.count) watcher.resolve();
    return gate.promise;
  };
  return {
    order,
    callTool,
    parked(count: number): Promise<void> {
      if (order.length >= count) return Promise.resolve();
      return new Promise((resolve) => watchers.push({ count, resolve }));
    },
    release: () => gate.resolve({ ok: true, valueJson: '"released"' }),
  };
}

function request(code: string, callTool: SandboxRunRequest['callTool']): SandboxRunRequest {
  return { code, toolNames: ['park', 'tick'], callTool, limits, signal: new AbortController().signal };
}

/** Keeps `chunks` arrays of 2 MB each, one per nested call, then parks. */
function grower(label: string, chunks: number): string {
  return `const keep = [];
for (let i = 0; i < ${chunks}; i++) { keep.push(new Array(250000).fill(i)); await tools.tick({}); }
await tools.park({ label: ${JSON.stringify(label)} });
return keep.length;`;
}

let runtime: SandboxRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

for (const name of RUNTIME_NAMES) {
  describe(`memory budget, runtime: ${name}`, () => {
    it('admits runs while their reservations fit, queues the rest, and starts them in order as headroom frees', async () => {
      runtime = runtimeOf(name, { memoryBudgetMiB: 6, runReserveMiB: 2 });
      await runtime.ready();
      const lot = parkingLot();
      const park = (label: string) => runtime!.run(request(`return await tools.park({ label: ${JSON.stringify(label)} })`, lot.callTool));

      const admitted = ['a', 'b', 'c'].map(park);
      await lot.parked(3);
      expect(runtime.status()).toMatchObject({ busy: 3, queued: 0, saturated: true, memoryBudgetBytes: 6 * 1024 * 1024 });
      expect(runtime.status().memoryUsedBytes).toBeGreaterThanOrEqual(6 * 1024 * 1024);

      const queued = ['d', 'e'].map(park);
      expect(runtime.status()).toMatchObject({ busy: 3, queued: 2 });
      // Admitted together, a, b and c race to their first call (in the process runtime, from different children).
      expect([...lot.order].sort()).toEqual(['a', 'b', 'c']);

      lot.release();
      const outcomes = await Promise.all([...admitted, ...queued]);
      expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true, true, true, true]);
      // The queued runs ran only once the first three had ended. (d and e are admitted together
      // as headroom frees; which of their first calls arrives first is theirs to race.)
      expect(lot.order.slice(0, 3).sort()).toEqual(['a', 'b', 'c']);
      expect(lot.order.slice(3).sort()).toEqual(['d', 'e']);
      expect(runtime.status()).toMatchObject({ busy: 0, queued: 0, saturated: false, admitted: 5, refused: 0 });
    });

    it('refuses a run `busy` when the queue is full, and counts it', async () => {
      runtime = runtimeOf(name, { memoryBudgetMiB: 2, runReserveMiB: 2, queueLimit: 0 });
      await runtime.ready();
      const lot = parkingLot();
      const holder = runtime.run(request(`return await tools.park({ label: 'holder' })`, lot.callTool));
      await lot.parked(1);
      expect(await runtime.run(request('return 1', lot.callTool))).toMatchObject({ ok: false, failure: { kind: 'busy' } });
      expect(runtime.status()).toMatchObject({ refused: 1, admitted: 1, saturated: true });
      lot.release();
      expect(await holder).toMatchObject({ ok: true });
      expect(runtime.status().saturated).toBe(false);
    });

    it('when runs that allocate slowly outgrow the budget, the one that grew most fails `memory` and the others finish', async () => {
      runtime = runtimeOf(name, { memoryBudgetMiB: 48, runReserveMiB: 2 });
      await runtime.ready();
      const lot = parkingLot();
      const small = ['s1', 's2', 's3', 's4'].map((label) => runtime!.run(request(`return await tools.park({ label: ${JSON.stringify(label)} })`, lot.callTool)));
      await lot.parked(4);
      // ~10 MiB, under any share of the budget.
      const slow = runtime.run(request(grower('slow', 5), lot.callTool));
      await lot.parked(5);
      // Reaches ~80 MiB, then parks: past 48 once it passes ~28 MiB, always the biggest by then
      // (stopped while growing or once parked, as the measurements fall).
      const big = runtime.run(request(grower('big', 40), lot.callTool));

      const bigOutcome: SandboxRunOutcome = await big;
      expect(bigOutcome).toMatchObject({ ok: false, failure: { kind: 'memory' } });
      expect(!bigOutcome.ok && bigOutcome.failure.message).toMatch(/ran short of memory for all its runs, and this run had grown the most/);

      lot.release();
      const rest = await Promise.all([...small, slow]);
      expect(rest.map((outcome) => outcome.ok)).toEqual([true, true, true, true, true]);
      expect(rest[4]).toMatchObject({ resultJson: '5' });
      if (name === 'in-process') expect(runtime.status().memoryStopped).toBe(1);
    });
  });
}
