import { afterEach, describe, expect, it } from 'vitest';
import type { ProcessRuntime } from '../../sandbox/process/process-runtime.ts';
import { isGone, limits, parkedRun, processRuntime, request } from './process-helpers.ts';

let runtime: ProcessRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

// Heartbeats far slower than the deadline, so only the deadline can act.
const options = { children: 1, killGraceMs: 300, heartbeatTimeoutMs: 60_000 };

describe('process runtime: the parent’s deadline is authoritative', () => {
  it('kills a child that has not ended the run by deadline + grace', async () => {
    runtime = processRuntime(options);
    await runtime.ready();
    const started = performance.now();
    const { pending } = await parkedRun(runtime, { limits: { ...limits, timeoutMs: 500 } });
    const [child] = runtime.processes();
    // A frozen child cannot end the run, whatever its runtime would do.
    process.kill(child.pid, 'SIGSTOP');

    const outcome = await pending;
    const elapsed = performance.now() - started;
    expect(outcome).toMatchObject({
      ok: false,
      failure: { kind: 'timeout', message: 'the program did not stop at its 500 ms deadline; its sandbox process was killed' },
    });
    expect(elapsed).toBeGreaterThanOrEqual(800 - 5);
    await expect.poll(() => isGone(child.pid)).toBe(true);
    await runtime.ready();
    expect(runtime.status()).toMatchObject({ children: 1, busy: 0, restarts: 1 });
  });

  it('times a run queued in the child from its start there, not from when it was sent', async () => {
    // One computing run per child: the second waits in the child until the first is stopped. Sent at
    // once, the second's deadline + grace (2 s) passes while it still waits: that is no reason to kill.
    runtime = processRuntime({ ...options, killGraceMs: 1_000, maxActiveRuns: 1, queueTimeoutMs: 30_000 });
    await runtime.ready();
    const first = runtime.run(request('while (true) {}', { limits: { ...limits, timeoutMs: 3_000 } }));
    const second = runtime.run(request('while (true) {}', { limits: { ...limits, timeoutMs: 1_000 } }));
    const third = runtime.run(request('return 1 + 1'));
    const stoppedByChild = (ms: number) => ({ ok: false, failure: { kind: 'timeout', message: expect.stringContaining(`ran longer than ${ms} ms`) } });
    expect(await first).toMatchObject(stoppedByChild(3_000));
    expect(await second).toMatchObject(stoppedByChild(1_000));
    // All three ran in the one child: none was failed by a kill (the child retires after its timeouts, by design).
    expect(await third).toMatchObject({ ok: true, resultJson: '2' });
  });

  it('retires a child whose isolate outlives the run (a builtin the isolate timeout cannot stop)', async () => {
    runtime = processRuntime(options);
    await runtime.ready();
    const [child] = runtime.processes();
    const outcome = await runtime.run(request('const a = new Array(2e8).fill(0);\nreturn a.length;', { limits: { ...limits, timeoutMs: 1_000 } }));
    expect(outcome.ok ? 'ok' : outcome.failure.kind).toMatch(/^(timeout|memory)$/);
    await expect.poll(() => isGone(child.pid)).toBe(true);
    await runtime.ready();
    expect(await runtime.run(request('return 1 + 1'))).toMatchObject({ ok: true, resultJson: '2' });
  });

  it('ends an aborted run promptly and keeps the child', async () => {
    runtime = processRuntime(options);
    await runtime.ready();
    const controller = new AbortController();
    const { pending, tool } = await parkedRun(runtime, { signal: controller.signal });
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, failure: { kind: 'abort' } });
    tool.release({ ok: true, value: {} });
    expect(runtime.status()).toMatchObject({ children: 1, busy: 0, restarts: 0 });
    expect(await runtime.run(request('return 1 + 1'))).toMatchObject({ ok: true, resultJson: '2' });
  });

  it('kills a child that does not answer an abort within the grace', async () => {
    runtime = processRuntime(options);
    await runtime.ready();
    const controller = new AbortController();
    const { pending } = await parkedRun(runtime, { signal: controller.signal });
    const [child] = runtime.processes();
    process.kill(child.pid, 'SIGSTOP');
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, failure: { kind: 'abort', message: 'the run was aborted' } });
    await expect.poll(() => isGone(child.pid)).toBe(true);
    await runtime.ready();
    expect(runtime.status().restarts).toBe(1);
  });
});
