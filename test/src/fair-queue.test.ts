import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/fair-queue.ts';

const tenantOf = (sessionId: string) => sessionId.split('_')[0];

function queueOf(jobs: [string, string, string][], withTenants = true) {
  const queue = new FairQueue<string>(withTenants ? tenantOf : undefined);
  for (const [name, sessionId, runId] of jobs) queue.push(name, queue.keysOf({ sessionId, runId }));
  return queue;
}

const takeAll = (queue: FairQueue<string>) => {
  const order: string[] = [];
  for (let job = queue.shift(8, 8); job !== undefined; job = queue.shift(8, 8)) order.push(job);
  return order;
};

describe('FairQueue', () => {
  it('serves tenants in turn, then runs in turn within a tenant, each run in arrival order', () => {
    const queue = queueOf([
      ['a1', 'acme_s', 'r1'],
      ['a2', 'acme_s', 'r1'],
      ['a3', 'acme_s', 'r1'],
      ['b1', 'acme_t', 'r2'],
      ['g1', 'globex_s', 'r3'],
      ['g2', 'globex_s', 'r3'],
    ]);
    expect(takeAll(queue)).toEqual(['a1', 'g1', 'b1', 'g2', 'a2', 'a3']);
    expect(queue.length).toBe(0);
  });

  it('without tenants, runs take turns', () => {
    const queue = queueOf(
      [
        ['a1', 'acme_s', 'r1'],
        ['a2', 'acme_s', 'r1'],
        ['g1', 'globex_s', 'r3'],
      ],
      false,
    );
    expect(takeAll(queue)).toEqual(['a1', 'g1', 'a2']);
  });

  it('puts queued-again jobs first, and forgets removed ones', () => {
    const queue = queueOf([
      ['a1', 'acme_s', 'r1'],
      ['g1', 'globex_s', 'r3'],
    ]);
    queue.unshift(['again'], () => queue.keysOf({ sessionId: 'globex_s', runId: 'r3' }));
    expect(queue.remove('a1')).toBe(true);
    expect(queue.remove('a1')).toBe(false);
    expect(takeAll(queue)).toEqual(['again', 'g1']);
  });

  it('keeps the last free worker from a run, and from a tenant, that holds all the others', () => {
    const queue = queueOf([
      ['a2', 'acme_s', 'r1'],
      ['a3', 'acme_t', 'r2'],
      ['g1', 'globex_s', 'r3'],
    ]);
    // acme's run r1 holds 1 of 2 workers: neither r1 nor another acme run takes the last one; globex does.
    queue.holding([queue.keysOf({ sessionId: 'acme_s', runId: 'r1' })], 1);
    expect(queue.shift(2, 1)).toBe('g1');
    expect(queue.shift(2, 1)).toBeUndefined();
    // Two workers free: anyone may start.
    expect(queue.shift(2, 2)).toBe('a2');
    queue.holding([queue.keysOf({ sessionId: 'acme_s', runId: 'r1' })], -1);
    expect(queue.shift(2, 1)).toBe('a3');
    // A pool of one worker keeps nothing back.
    const single = queueOf([['a1', 'acme_s', 'r1']]);
    expect(single.shift(1, 1)).toBe('a1');
  });

  it('gives each job without an owner a run of its own', () => {
    const queue = new FairQueue<string>();
    queue.holding([queue.keysOf(undefined)], 1);
    queue.push('x', queue.keysOf(undefined));
    expect(queue.shift(2, 1)).toBe('x');
  });
});
