/**
 * Overload over HTTP: past the sandbox's memory budget (here one run), a run
 * the queue cannot hold is a 503 `SANDBOX_BUSY` with Retry-After, /readyz
 * reports the saturation and recovers, and /metrics counts it all.
 */
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../services/config.ts';
import { json, post, readSse, startServer } from './helpers.ts';

/** The value of the unlabelled sample `name` in a Prometheus text exposition. */
function sample(metrics: string, name: string): number {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics);
  return match === null ? Number.NaN : Number(match[1]);
}

describe('capacity', () => {
  it('busy is a 503 with Retry-After, /readyz flips under saturation and back, /metrics shows admission', async () => {
    const { url, server } = await startServer({ pool: { memoryBudgetMiB: 2, runReserveMiB: 2, queueLimit: 0 } });
    try {
      await server.core.runtime.ready();
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      const holder = await post(
        `${url}/v1/run`,
        { code: `console.log('started');\nawait new Promise((resolve) => setTimeout(resolve, 600000));`, callId: 'holder' },
        { accept: 'text/event-stream' },
      );
      let busy: Response | undefined;
      let readyWhileHeld: Response | undefined;
      let metricsWhileHeld = '';
      await readSse(holder, (event) => {
        if (event.event !== 'log') return;
        void (async () => {
          readyWhileHeld = await fetch(`${url}/readyz`);
          busy = await post(`${url}/v1/run`, { code: 'return 1' });
          metricsWhileHeld = await (await fetch(`${url}/metrics`)).text();
          await fetch(`${url}/v1/runs/holder`, { method: 'DELETE' });
        })();
      });

      expect(readyWhileHeld!.status).toBe(503);
      expect(await json(readyWhileHeld!)).toMatchObject({ code: 'NOT_READY', message: expect.stringContaining('saturated') });
      expect(busy!.status).toBe(503);
      expect(busy!.headers.get('retry-after')).toBe('1');
      expect(await json(busy!)).toMatchObject({ code: 'SANDBOX_BUSY' });
      expect(sample(metricsWhileHeld, 'ptc_pool_saturated')).toBe(1);
      expect(sample(metricsWhileHeld, 'ptc_pool_busy')).toBe(1);
      expect(sample(metricsWhileHeld, 'ptc_pool_refused_total')).toBe(1);
      expect(sample(metricsWhileHeld, 'ptc_pool_memory_budget_bytes')).toBe(2 * 1024 * 1024);
      expect(sample(metricsWhileHeld, 'ptc_pool_memory_used_bytes')).toBeGreaterThanOrEqual(2 * 1024 * 1024);

      // The holder ended (cancelled): headroom is back.
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      expect(await json(post(`${url}/v1/run`, { code: 'return 1' }))).toMatchObject({ isError: false, value: { result: 1 } });
      const after = await (await fetch(`${url}/metrics`)).text();
      expect(sample(after, 'ptc_pool_saturated')).toBe(0);
      expect(sample(after, 'ptc_pool_admitted_total')).toBe(2);
      expect(sample(after, 'ptc_pool_queued')).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe('kept isolates', () => {
  it("by default a session's next run reuses its isolate and /metrics counts it; with pool.sessionIsolates 0 none does", async () => {
    for (const [sessionIsolates, expected] of [
      [undefined, 1],
      [0, 0],
    ] as const) {
      const { url, server, config } = await startServer(sessionIsolates === undefined ? {} : { pool: { burstThreads: 0, sessionIsolates } });
      try {
        expect(config.pool.sessionIsolates).toBe(sessionIsolates);
        for (const n of [1, 2]) expect(await json(post(`${url}/v1/run`, { code: `return ${n}`, sessionId: 'kept' }))).toMatchObject({ value: { result: n } });
        const metrics = async () => (await fetch(`${url}/metrics`)).text();
        expect(sample(await metrics(), 'ptc_pool_isolates_reused_total')).toBe(expected);
        // The second run's isolate is kept in turn (once recycled, and reported), or nothing is.
        if (expected === 1) await expect.poll(async () => sample(await metrics(), 'ptc_pool_kept_isolate_bytes'), { timeout: 10_000 }).toBeGreaterThan(0);
        else expect(sample(await metrics(), 'ptc_pool_kept_isolate_bytes')).toBe(0);
      } finally {
        await server.close();
      }
    }
  });
});

describe('capacity settings', () => {
  it('the config file takes the budget keys, and runsPerChild still works as an optional cap', () => {
    const pool = { memoryBudgetMiB: 4096, runReserveMiB: 1.5, maxActiveRuns: 8, runsPerChild: 64, queueLimit: 500, queueTimeoutMs: 2000, sessionIsolates: 4, sessionIsolateIdleMs: 1000 };
    expect(parseConfigFile({ pool })).toEqual({ pool });
    expect(() => parseConfigFile({ pool: { memoryBudgetMiB: 0 } })).toThrow(/pool\.memoryBudgetMiB must be >= 1/);
  });
});

describe('503s name their cause', () => {
  it('no compute slot: /readyz and /metrics say so; a full queue: QUEUE_FULL; the queued run runs once the slot frees', async () => {
    const { url, server } = await startServer({ pool: { maxActiveRuns: 1, queueLimit: 1, queueTimeoutMs: 600_000 } });
    try {
      await server.core.runtime.ready();
      // Computing, never awaiting: it holds the one compute slot until cancelled.
      const holder = await post(
        `${url}/v1/run`,
        { code: "console.log('started');\nfor (;;) {}", callId: 'holder', timeoutMs: 600_000 },
        { accept: 'text/event-stream' },
      );
      let queued: Promise<Response> | undefined;
      let full: Response | undefined;
      let ready: Response | undefined;
      let metrics = '';
      await readSse(holder, (event) => {
        if (event.event !== 'log') return;
        void (async () => {
          ready = await fetch(`${url}/readyz`);
          queued = post(`${url}/v1/run`, { code: 'return 1' });
          await expect.poll(() => server.core.runtime.status().queued).toBe(1);
          full = await post(`${url}/v1/run`, { code: 'return 2' });
          metrics = await (await fetch(`${url}/metrics`)).text();
          await fetch(`${url}/v1/runs/holder`, { method: 'DELETE' });
        })();
      });
      expect(ready!.status).toBe(503);
      expect(await json(ready!)).toMatchObject({ code: 'NOT_READY', message: expect.stringContaining('compute slot') });
      expect(full!.status).toBe(503);
      expect(await json(full!)).toMatchObject({ code: 'QUEUE_FULL' });
      expect(metrics).toMatch(/^ptc_pool_saturated_by\{cause="compute"\} 1$/m);
      expect(metrics).toMatch(/^ptc_pool_saturated_by\{cause="memory"\} 0$/m);
      // The slot freed: the queued run ran.
      expect(await json(queued!)).toMatchObject({ isError: false, value: { result: 1 } });
    } finally {
      await server.close();
    }
  });

  it('no compute slot and no queue: NO_COMPUTE_SLOT with Retry-After', async () => {
    const { url, server } = await startServer({ pool: { maxActiveRuns: 1, queueLimit: 0 } });
    try {
      await server.core.runtime.ready();
      const holder = await post(`${url}/v1/run`, { code: "console.log('started');\nfor (;;) {}", callId: 'holder', timeoutMs: 600_000 }, { accept: 'text/event-stream' });
      let refused: Response | undefined;
      await readSse(holder, (event) => {
        if (event.event !== 'log') return;
        void (async () => {
          refused = await post(`${url}/v1/run`, { code: 'return 1' });
          await fetch(`${url}/v1/runs/holder`, { method: 'DELETE' });
        })();
      });
      expect(refused!.status).toBe(503);
      expect(refused!.headers.get('retry-after')).toBe('1');
      expect(await json(refused!)).toMatchObject({ code: 'NO_COMPUTE_SLOT', message: expect.stringContaining('compute slot') });
    } finally {
      await server.close();
    }
  });
});
