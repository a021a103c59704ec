import { afterEach, describe, expect, it } from 'vitest';
import type { ProcessRuntime } from '../../sandbox/process/process-runtime.ts';
import { gatedTool, parkedRun, processRuntime, request } from './process-helpers.ts';

let runtime: ProcessRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe('process runtime: a child dies during a run', () => {
  it('fails that run `crashed`, leaves the other child’s run alone and restores the pool', async () => {
    runtime = processRuntime({ children: 2, runsPerChild: 1 });
    await runtime.ready();

    const first = gatedTool();
    const crashing = runtime.run(request('console.log("before the crash")\nawait tools.wait({})\nreturn 1', { callTool: first.callTool }));
    await first.called;
    const victim = runtime.processes().find((child) => child.runs === 1);
    expect(victim).toBeDefined();

    const second = gatedTool();
    const surviving = runtime.run(request('const v = await tools.wait({})\nreturn v', { callTool: second.callTool }));
    await second.called;
    expect(runtime.status().busy).toBe(2);

    process.kill(victim!.pid, 'SIGKILL');
    const crashed = await crashing;
    expect(crashed).toEqual({
      ok: false,
      logs: ['before the crash'],
      failure: { kind: 'crashed', message: 'the sandbox process died (signal SIGKILL) during the run; run it again' },
    });

    // The crashed run's nested call still settles in the parent; its result is simply dropped.
    first.release({ ok: true, value: {} });
    second.release({ ok: true, value: { x: 2 } });
    expect(await surviving).toMatchObject({ ok: true, resultJson: '{"x":2}' });

    await runtime.ready();
    expect(runtime.status()).toMatchObject({ children: 2, busy: 0, queued: 0, restarts: 1 });
    expect(runtime.processes().map((child) => child.pid)).not.toContain(victim!.pid);
    expect(await runtime.run(request('return 1 + 1'))).toMatchObject({ ok: true, resultJson: '2' });
  });

  it('replaces a child that stops answering heartbeats, failing its run `crashed`', async () => {
    runtime = processRuntime({ children: 1, heartbeatIntervalMs: 100, heartbeatTimeoutMs: 2_000 });
    await runtime.ready();
    const { pending: stuck } = await parkedRun(runtime);
    const child = runtime.processes().find((candidate) => candidate.runs === 1);
    expect(child).toBeDefined();
    process.kill(child!.pid, 'SIGSTOP');

    expect(await stuck).toMatchObject({
      ok: false,
      failure: { kind: 'crashed', message: 'the sandbox process stopped answering during the run and was replaced; run it again' },
    });
    await runtime.ready();
    expect(runtime.status().restarts).toBe(1);
    expect(await runtime.run(request('return 1 + 1'))).toMatchObject({ ok: true, resultJson: '2' });
  });

  it('replaces a child past its RSS ceiling, failing its run `crashed`', async () => {
    runtime = processRuntime({ children: 1, rssLimitMiB: 1, heartbeatIntervalMs: 50 });
    await runtime.ready();
    const tool = gatedTool();
    const outcome = await runtime.run(request('await tools.wait({})\nreturn 1', { callTool: tool.callTool }));
    expect(outcome).toMatchObject({
      ok: false,
      failure: {
        kind: 'crashed',
        message: 'the sandbox process passed its memory ceiling (1 MiB) during the run and was replaced; run it again',
      },
    });
  });

  it('rejects ready() with a clear error when children cannot start', async () => {
    runtime = processRuntime({ children: 1, runtimeModule: new URL('./no-such-runtime.ts', import.meta.url).href });
    await expect(runtime.ready()).rejects.toThrow(/^the sandbox processes fail to start \(.*\); check the runtime installation$/);
    await expect(runtime.ready()).rejects.toThrow(/^the sandbox processes fail to start/);
  });
});
