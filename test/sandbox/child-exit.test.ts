/**
 * A sandbox child told to go (its IPC channel closes) while programs still
 * compute in it ends with exit code 0, not by a signal. `process.exit` would
 * tear V8's platform down while isolated-vm's threads still unwind the
 * terminated isolates, and the child would die of SIGSEGV.
 */
import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../../sandbox/process/options.ts';
import { SandboxChild } from '../../sandbox/process/sandbox-child.ts';
import type { SandboxRunOutcome } from '../../src/sandbox-runtime.ts';
import { testLimits } from './harness.ts';

const RUNS = 4;

async function terminateMidRun(): Promise<{ reason: string; outcomes: SandboxRunOutcome[] }> {
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  let reason = '';
  const child = new SandboxChild(resolveOptions({ children: 1, killGraceMs: 30_000 }), {
    onReady: () => ready(),
    onExit: (_child, why) => (reason = why),
    onRunEnd: () => undefined,
    onRetire: () => undefined,
  });
  await isReady;
  let started = 0;
  let allStarted!: () => void;
  const computing = new Promise<void>((resolve) => (allStarted = resolve));
  const runs = Array.from({ length: RUNS }, () =>
    child.run({
      code: "console.log('started');\nwhile (true) {}",
      toolNames: [],
      limits: { ...testLimits, timeoutMs: 60_000 },
      signal: new AbortController().signal,
      callTool: () => Promise.resolve({ ok: false, error: { code: 'TOOL_FAILED', message: 'no tools here', callId: '' } }),
      onLog: () => {
        if (++started === RUNS) allStarted();
      },
    }),
  );
  await computing;
  await child.terminate('the test is over');
  return { reason, outcomes: await Promise.all(runs) };
}

describe('a sandbox child closed mid-run', () => {
  it('exits with code 0 while its isolates are still computing, every time', async () => {
    for (let round = 0; round < 5; round++) {
      const { reason, outcomes } = await terminateMidRun();
      expect(reason).toBe('exit code 0');
      for (const outcome of outcomes) expect(outcome.ok).toBe(false);
    }
  });
});
