/**
 * Admission by memory budget, in both runtimes: runs are admitted while their
 * reservations fit, the rest queue and start as headroom frees, and when
 * admitted runs outgrow the budget the one that grew most fails `memory`
 * while the others finish.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxCallOutcome, SandboxLimits, SandboxRunOutcome, SandboxRunRequest, SandboxRuntime } from '../../src/sandbox-runtime.ts';
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { MemoryBudget, type BudgetTicket } from '../../sandbox/memory-budget.ts';
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
    if (name !== 'park') return { ok: true, value: 0 };
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
    release: () => gate.resolve({ ok: true, value: 'released' }),
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
    it('ready() warms the runtime with a program of its own that no count shows; the first run is admitted as the first', async () => {
      runtime = runtimeOf(name, { memoryBudgetMiB: 64, runReserveMiB: 2 });
      await runtime.ready();
      expect(runtime.status()).toMatchObject({ busy: 0, queued: 0, admitted: 0, refused: 0 });
      const outcome = await runtime.run(request('return await tools.tick({});', parkingLot().callTool));
      expect(outcome).toMatchObject({ ok: true, resultJson: '0' });
      expect(runtime.status()).toMatchObject({ busy: 0, admitted: 1 });
    });

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
      // The admitted three run at once: they reach their call in any order.
      expect([...lot.order].sort()).toEqual(['a', 'b', 'c']);

      lot.release();
      const outcomes = await Promise.all([...admitted, ...queued]);
      expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true, true, true, true]);
      // The queued runs started only once headroom freed: after the first three.
      expect([...lot.order.slice(3)].sort()).toEqual(['d', 'e']);
      expect(runtime.status()).toMatchObject({ busy: 0, queued: 0, saturated: false, admitted: 5, refused: 0 });
    });

    it('serves the queue first come first served as headroom frees', async () => {
      // Room for one run: each queued run starts when the one before it has ended.
      runtime = runtimeOf(name, { memoryBudgetMiB: 2, runReserveMiB: 2 });
      await runtime.ready();
      const lot = parkingLot();
      const park = (label: string) => runtime!.run(request(`return await tools.park({ label: ${JSON.stringify(label)} })`, lot.callTool));
      const first = park('a');
      await lot.parked(1);
      const rest = ['b', 'c', 'd'].map(park);
      expect(runtime.status()).toMatchObject({ busy: 1, queued: 3, saturated: true });
      lot.release();
      expect((await Promise.all([first, ...rest])).every((outcome) => outcome.ok)).toBe(true);
      expect(lot.order).toEqual(['a', 'b', 'c', 'd']);
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

describe('computing-run cap, runtime: in-process', () => {
  it('a run awaiting a tool call frees its computing slot; a run awaiting a timer does not', async () => {
    runtime = createInProcessRuntime({ warmPoolSize: 1, maxActiveRuns: 1, queueLimit: 10, queueTimeoutMs: 120_000 });
    await runtime.ready();
    const lot = parkingLot();
    const park = (label: string) => runtime!.run(request(`return await tools.park({ label: ${JSON.stringify(label)} })`, lot.callTool));
    const a = park('a');
    await lot.parked(1);
    // `a` waits on its tool: the one computing slot is free again.
    const b = park('b');
    await lot.parked(2);
    expect(runtime.status()).toMatchObject({ busy: 2, queued: 0, saturated: false });

    const controller = new AbortController();
    const sleeper = runtime.run({ ...request('await new Promise((resolve) => setTimeout(resolve, 100000));', lot.callTool), signal: controller.signal });
    const waiting = runtime.run(request('return "after"', lot.callTool));
    expect(runtime.status()).toMatchObject({ busy: 3, queued: 1, saturated: true });

    controller.abort();
    expect(await sleeper).toMatchObject({ ok: false, failure: { kind: 'abort' } });
    expect(await waiting).toMatchObject({ ok: true, resultJson: '"after"' });
    lot.release();
    expect((await Promise.all([a, b])).every((outcome) => outcome.ok)).toBe(true);
  });
});

describe('MemoryBudget measures only runs that may have grown', () => {
  it('measures a run once after its start, not again while nothing touches it, and again after a touch', async () => {
    const budget = new MemoryBudget(64 * 1024 * 1024, 2 * 1024 * 1024);
    const parked = budget.admit();
    const busy = budget.admit();
    const measured: string[] = [];
    parked.measure = async () => (measured.push('parked'), 3 * 1024 * 1024);
    busy.measure = async () => (measured.push('busy'), 4 * 1024 * 1024);
    await budget.measureAll();
    expect(measured.sort()).toEqual(['busy', 'parked']);
    expect(budget.usedBytes).toBe(7 * 1024 * 1024);

    measured.length = 0;
    await budget.measureAll();
    expect(measured).toEqual([]);
    expect(budget.dirtyRuns).toBe(0);

    budget.touch(busy);
    expect(budget.dirtyRuns).toBe(1);
    await budget.measureAll();
    expect(measured).toEqual(['busy']);
  });

  it('keeps a run dirty when it is touched while its measurement is in flight', async () => {
    const budget = new MemoryBudget(64 * 1024 * 1024, 2 * 1024 * 1024);
    const ticket = budget.admit();
    let answer: ((bytes: number) => void) | undefined;
    ticket.measure = () => new Promise<number>((resolve) => (answer = resolve));
    const sweep = budget.measureAll();
    // A reply handed over after the measurement was asked for: the answer may predate what it let run.
    budget.touch(ticket);
    answer?.(3 * 1024 * 1024);
    await sweep;
    expect(budget.dirtyRuns).toBe(1);
  });

  it('keeps count of the runs to measure as tickets are touched, measured, stopped and released', async () => {
    const budget = new MemoryBudget(8 * 1024 * 1024, 2 * 1024 * 1024);
    const held = new Set<BudgetTicket>();
    // What the count stands for, by a scan of every ticket held.
    const scanned = (): number => [...held].filter((ticket) => !ticket.stopped && ticket.changes !== ticket.measuredChanges).length;
    const expectCount = (count: number): void => {
      expect(budget.dirtyRuns).toBe(count);
      expect(scanned()).toBe(count);
    };
    const answers = new Map<BudgetTicket, (bytes: number) => void>();
    const admit = (): BudgetTicket => {
      const ticket = budget.admit();
      held.add(ticket);
      ticket.measure = () => new Promise<number>((resolve) => answers.set(ticket, resolve));
      return ticket;
    };
    const answer = (ticket: BudgetTicket, bytes: number): void => {
      answers.get(ticket)?.(bytes);
      answers.delete(ticket);
    };
    const release = (ticket: BudgetTicket): void => {
      budget.release(ticket);
      held.delete(ticket);
    };
    const MiB = 1024 * 1024;

    // Admitted runs are dirty until measured.
    const a = admit();
    const b = admit();
    const c = admit();
    expectCount(3);
    let sweep = budget.measureAll();
    // Asked for, not yet answered: still dirty; touching a dirty run twice adds nothing.
    budget.touch(a);
    budget.touch(a);
    expectCount(3);
    answer(a, MiB);
    answer(b, MiB);
    answer(c, MiB);
    await sweep;
    // `a` was touched while its measurement was in flight: it stays dirty, the others are clean.
    expectCount(1);

    budget.touch(b);
    budget.touch(b);
    expectCount(2);
    sweep = budget.measureAll();
    // Only the dirty runs were asked.
    expect([answers.has(a), answers.has(b), answers.has(c)]).toEqual([true, true, false]);
    answer(a, MiB);
    answer(b, MiB);
    await sweep;
    expectCount(0);

    // A dirty run released leaves the count; a clean one leaves it unchanged; a touch after release counts nothing.
    budget.touch(c);
    expectCount(1);
    release(c);
    expectCount(0);
    budget.touch(c);
    release(c);
    expectCount(0);
    release(b);
    expectCount(0);

    // Released while its measurement is in flight: the late answer changes nothing.
    budget.touch(a);
    sweep = budget.measureAll();
    release(a);
    expectCount(0);
    answer(a, MiB);
    await sweep;
    expectCount(0);
    expect(budget.runs).toBe(0);
    expect(budget.usedBytes).toBe(0);

    // A run stopped by the budget is never measured again: it leaves the count, and touching it adds nothing.
    const big = admit();
    const small = admit();
    const stopped: string[] = [];
    big.stop = (failure) => stopped.push(failure.kind);
    sweep = budget.measureAll();
    answer(big, 7 * MiB);
    answer(small, MiB);
    await sweep;
    budget.touch(big);
    budget.touch(small);
    expectCount(2);
    expect(budget.enforce()).toBe(1);
    expect(stopped).toEqual(['memory']);
    expect(big.stopped).toBe(true);
    expectCount(1);
    budget.touch(big);
    expectCount(1);
    release(big);
    expectCount(1);
    release(small);
    expectCount(0);
  });
});
