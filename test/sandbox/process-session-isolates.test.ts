/**
 * The process runtime keeps isolates for sessions too (by default): each
 * child's runtime keeps them (sessionIsolates), and a session's run goes to the child that
 * ran its last one while that child has spare CPU, even when another child
 * is less charged. The children report reuse, and the memory their kept isolates hold, with their heartbeats.
 */
import { afterEach, expect, it } from 'vitest';
import type { ProcessRuntime } from '../../sandbox/process/process-runtime.ts';
import { deferred, processRuntime, request } from './process-helpers.ts';
import type { JsonValue } from '../../src/json.ts';

let runtime: ProcessRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

it("sends a session's run to the child that keeps its isolate, past a less charged child", async () => {
  runtime = processRuntime({ children: 2, heartbeatIntervalMs: 20 });
  await runtime.ready();
  expect(await runtime.run(request('return 1', { sessionId: 'mine' }))).toMatchObject({ ok: true, resultJson: '1' });
  // Another session's run waits on a tool in the same child (the least charged then, with the first
  // child winning ties), which charges that child more than the other.
  const gate = deferred<void>();
  const called = deferred<void>();
  const blocker = runtime.run(
    request('await tools.wait({}); return 0', {
      sessionId: 'other',
      callTool: async (_name, argsJson) => {
        called.resolve();
        await gate.promise;
        return { ok: true, value: JSON.parse(argsJson) as JsonValue };
      },
    }),
  );
  await called.promise;
  const busy = runtime.processes().filter((child) => child.runs > 0);
  expect(busy).toHaveLength(1);
  expect(await runtime.run(request('return 2', { sessionId: 'mine' }))).toMatchObject({ ok: true, resultJson: '2' });
  gate.resolve();
  expect(await blocker).toMatchObject({ ok: true });
  await expect.poll(() => runtime?.status().isolatesReused, { timeout: 10_000 }).toBe(1);
  // Each child reports the isolates it keeps (both sessions' ended runs left theirs).
  await expect.poll(() => runtime?.status().keptIsolateBytes ?? 0, { timeout: 10_000 }).toBeGreaterThan(0);
});

it("hands sessionIsolates and sessionIsolateIdleMs to the children's runtimes", async () => {
  runtime = processRuntime({ children: 1, sessionIsolates: 0, sessionIsolateIdleMs: 1234, runtimeModule: new URL('./options-echo-runtime.fixture.ts', import.meta.url).href });
  const outcome = await runtime.run(request('return 1', { sessionId: 'mine' }));
  expect(outcome.ok ? JSON.parse(outcome.resultJson ?? 'null') : outcome.failure).toMatchObject({ sessionIsolates: 0, sessionIsolateIdleMs: 1234 });
});
