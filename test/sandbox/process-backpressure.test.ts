import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxRunOutcome } from '../../src/sandbox-runtime.ts';
import type { ProcessRuntime } from '../../sandbox/process/process-runtime.ts';
import { gatedTool, processRuntime, request } from './process-helpers.ts';

let runtime: ProcessRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

/** One child, one run at a time, with a run parked in a tool call. */
async function occupiedPool(queue: { queueLimit: number; queueTimeoutMs: number }) {
  runtime = processRuntime({ children: 1, runsPerChild: 1, ...queue });
  await runtime.ready();
  const tool = gatedTool();
  const parked = runtime.run(request('const v = await tools.wait({})\nreturn v', { callTool: tool.callTool }));
  await tool.called;
  return { runtime, parked, release: () => tool.release({ ok: true, value: 'parked' }) };
}

describe('process runtime: backpressure', () => {
  it('queues up to queueLimit runs, refuses the next with `busy`, and serves the queue in order', async () => {
    const pool = await occupiedPool({ queueLimit: 2, queueTimeoutMs: 60_000 });
    const finished: string[] = [];
    const track = async (name: string, run: Promise<SandboxRunOutcome>) => {
      const outcome = await run;
      finished.push(name);
      return outcome;
    };
    const second = track('second', pool.runtime.run(request('return "second"')));
    const third = track('third', pool.runtime.run(request('return "third"')));
    expect(pool.runtime.status()).toMatchObject({ busy: 1, queued: 2 });

    expect(await pool.runtime.run(request('return "flood"'))).toEqual({
      ok: false,
      logs: [],
      failure: { kind: 'busy', busy: 'queue-full', message: 'no sandbox capacity: 2 runs are already waiting; try again shortly' },
    });

    pool.release();
    expect(await pool.parked).toMatchObject({ ok: true, resultJson: '"parked"' });
    expect(await second).toMatchObject({ ok: true, resultJson: '"second"' });
    expect(await third).toMatchObject({ ok: true, resultJson: '"third"' });
    expect(finished).toEqual(['second', 'third']);
    expect(pool.runtime.status()).toMatchObject({ busy: 0, queued: 0 });
  });

  it('fails a run `busy` when no child frees up while the queue stands still for queueTimeoutMs', async () => {
    const pool = await occupiedPool({ queueLimit: 4, queueTimeoutMs: 200 });
    const waiting = pool.runtime.run(request('return 1'));
    // Queued first, not refused at once: the refusal comes from the queue standing still.
    expect(pool.runtime.status().queued).toBe(1);
    expect(await waiting).toEqual({
      ok: false,
      logs: [],
      failure: { kind: 'busy', busy: 'memory', message: 'no sandbox memory headroom freed up within 200 ms; try again shortly' },
    });
    expect(pool.runtime.status().queued).toBe(0);
    pool.release();
    expect(await pool.parked).toMatchObject({ ok: true });
  });

  it('a flood of runs against a tiny queue: every run either succeeds or fails `busy`', async () => {
    const pool = await occupiedPool({ queueLimit: 3, queueTimeoutMs: 60_000 });
    const flood = Array.from({ length: 20 }, (_, index) => pool.runtime.run(request(`return ${index}`)));
    pool.release();
    const kinds = (await Promise.all(flood)).map((outcome) => (outcome.ok ? 'ok' : outcome.failure.kind));
    expect(kinds.filter((kind) => kind === 'ok')).toHaveLength(3);
    expect(kinds.filter((kind) => kind === 'busy')).toHaveLength(17);
  });

  it('a queued run whose caller aborts leaves the queue with `abort`', async () => {
    const pool = await occupiedPool({ queueLimit: 4, queueTimeoutMs: 60_000 });
    const controller = new AbortController();
    const queued = pool.runtime.run(request('return 1', { signal: controller.signal }));
    expect(pool.runtime.status().queued).toBe(1);
    controller.abort();
    expect(await queued).toMatchObject({ ok: false, failure: { kind: 'abort' } });
    expect(pool.runtime.status().queued).toBe(0);
    pool.release();
    await pool.parked;
  });
});
