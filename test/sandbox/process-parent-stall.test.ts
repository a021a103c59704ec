/**
 * The heartbeat judges the child, not the parent: when the parent's own
 * event loop stalls past the heartbeat timeout (a long synchronous step, or
 * the host starved of CPU), it sent no pings meanwhile, so the child's
 * silence is no evidence. The soak's "4 runs crashed at 11 s" had this shape.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ProcessRuntime } from '../../sandbox/process/process-runtime.ts';
import { gatedTool, processRuntime, request } from './process-helpers.ts';

let runtime: ProcessRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

/** Blocks this thread (the parent's event loop) for `ms`: the stall under test, not a wait for something. */
function stallEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('process runtime: the parent stalls', () => {
  it('keeps a healthy child (and its run) when the parent itself was silent past the heartbeat timeout', async () => {
    runtime = processRuntime({ children: 1, heartbeatIntervalMs: 200, heartbeatTimeoutMs: 300 });
    await runtime.ready();
    // Three rounds: a round the heartbeat happens to judge with a pong already in the pipe proves nothing.
    for (let round = 0; round < 3; round++) {
      const tool = gatedTool();
      const run = runtime.run(request('const v = await tools.wait({})\nreturn v', { callTool: tool.callTool }));
      await tool.called;
      stallEventLoop(1_000);
      // Let the heartbeat judge after the stall (its timer is due now), then answer the run.
      await new Promise((resolve) => setTimeout(resolve, 0));
      await new Promise((resolve) => setImmediate(resolve));
      tool.release({ ok: true, value: { round } });
      expect(await run).toMatchObject({ ok: true, resultJson: `{"round":${round}}` });
    }
    expect(runtime.status().restarts).toBe(0);
  });
});
