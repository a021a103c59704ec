/**
 * The wait queue's timeout counts from the queue's last move: a run far back
 * in a burst that drains is not shed for the time ahead of it, while a queue
 * that stands still sheds the runs that waited its whole timeout, naming what
 * they lacked. Fake timers: the queue's own clock is the subject.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SandboxFailure } from '../../src/sandbox-runtime.ts';
import { WaitQueue, type Shortage } from '../../sandbox/wait-queue.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

function waiters(queue: WaitQueue<number>, count: number) {
  const outcomes: (string | SandboxFailure)[] = Array(count).fill('waiting');
  for (let i = 0; i < count; i++) {
    queue.enter({ start: (slot) => (outcomes[i] = `started ${slot}`), fail: (failure) => (outcomes[i] = failure) }, new AbortController().signal);
  }
  return outcomes;
}

describe('WaitQueue', () => {
  it('sheds nobody while the queue moves, however long the wait from arrival', () => {
    let shortage: Shortage = 'compute';
    const queue = new WaitQueue<number>({ limit: 10, timeoutMs: 1_000, shortage: () => shortage });
    const outcomes = waiters(queue, 4);
    for (const slot of [1, 2, 3]) {
      vi.advanceTimersByTime(900);
      let given = false;
      queue.drain(() => (given ? undefined : ((given = true), slot)));
    }
    // 2,700 ms after arriving, the last waiter still waits: the queue moved 900 ms before each of its steps.
    expect(outcomes).toEqual(['started 1', 'started 2', 'started 3', 'waiting']);
    vi.advanceTimersByTime(900);
    expect(outcomes[3]).toBe('waiting');
    // Standing still for the whole timeout: the waiter is refused, for what the runtime lacks then.
    shortage = 'memory';
    vi.advanceTimersByTime(100);
    expect(outcomes[3]).toMatchObject({ kind: 'busy', busy: 'memory', message: expect.stringContaining('memory headroom') });
    expect(queue.size).toBe(0);
    expect(queue.refused).toBe(1);
  });

  it('refuses a run past its limit as queue-full, and with no queue at all for what the runtime lacks', () => {
    const full = new WaitQueue<number>({ limit: 1, timeoutMs: 1_000, shortage: () => 'memory' });
    expect(waiters(full, 2)[1]).toMatchObject({ kind: 'busy', busy: 'queue-full' });
    const none = new WaitQueue<number>({ limit: 0, timeoutMs: 1_000, shortage: () => 'compute' });
    expect(waiters(none, 1)[0]).toMatchObject({ kind: 'busy', busy: 'compute', message: expect.stringContaining('compute slot') });
  });

  it('a waiter that arrived after the last move waits its own full timeout', () => {
    const queue = new WaitQueue<number>({ limit: 10, timeoutMs: 1_000, shortage: () => 'compute' });
    const first = waiters(queue, 1);
    vi.advanceTimersByTime(600);
    const second = waiters(queue, 1);
    vi.advanceTimersByTime(400);
    expect(first[0]).toMatchObject({ busy: 'compute' });
    expect(second[0]).toBe('waiting');
    vi.advanceTimersByTime(600);
    expect(second[0]).toMatchObject({ busy: 'compute' });
  });

  it('with fromArrival, each run waits a fixed timeout from its arrival, moving queue or not', () => {
    const queue = new WaitQueue<number>({ limit: 10, timeoutMs: 1_000, shortage: () => 'compute', fromArrival: true });
    const outcomes = waiters(queue, 2);
    vi.advanceTimersByTime(900);
    let given = false;
    queue.drain(() => (given ? undefined : ((given = true), 1)));
    vi.advanceTimersByTime(100);
    expect(outcomes).toEqual(['started 1', expect.objectContaining({ kind: 'busy', busy: 'compute' })]);
  });

  it('does not count the time the runtime spends starting as standing still', () => {
    let starting = true;
    const queue = new WaitQueue<number>({ limit: 10, timeoutMs: 1_000, shortage: () => 'starting', starting: () => starting });
    const outcomes = waiters(queue, 1);
    vi.advanceTimersByTime(5_000);
    expect(outcomes[0]).toBe('waiting');
    // It gave up starting: from then on the wait counts, and the refusal says why.
    starting = false;
    vi.advanceTimersByTime(2_000);
    expect(outcomes[0]).toMatchObject({ kind: 'busy', busy: 'starting' });
  });
});
