import { expect, it } from 'vitest';
import { DEFAULT_POOL, DEFAULT_PROCESS_POOL } from '../../src/code-mode/pool-defaults.ts';
import { resolveAdmission } from '../../sandbox/pool-options.ts';
import { resolveOptions } from '../../sandbox/process/options.ts';

it('admission takes DEFAULT_POOL for what is unset, per core where it is per core, and brings values into range', () => {
  expect(resolveAdmission({ memoryBudgetMiB: 512 }, 3)).toEqual({
    memoryBudgetMiB: 512,
    runReserveMiB: DEFAULT_POOL.runReserveMiB,
    maxActiveRuns: 3 * DEFAULT_POOL.activeRunsPerCore,
    queueLimit: DEFAULT_POOL.queueLimit,
    queueTimeoutMs: DEFAULT_POOL.queueTimeoutMs,
  });
  expect(resolveAdmission({ memoryBudgetMiB: 0, runReserveMiB: -1, maxActiveRuns: 2.5, queueLimit: -3, queueTimeoutMs: 7 }, 3)).toEqual({
    memoryBudgetMiB: 1,
    runReserveMiB: 0,
    maxActiveRuns: 2,
    queueLimit: 0,
    queueTimeoutMs: 7,
  });
});

it('the process runtime admits as the in-process one does, and takes DEFAULT_PROCESS_POOL for its children', () => {
  const options = { children: 2, memoryBudgetMiB: 1024, maxActiveRuns: 8 };
  const resolved = resolveOptions(options);
  expect(resolved).toMatchObject({ ...resolveAdmission(options), children: 2 });
  expect(resolved).toMatchObject({
    heartbeatIntervalMs: DEFAULT_PROCESS_POOL.heartbeatIntervalMs,
    heartbeatTimeoutMs: DEFAULT_PROCESS_POOL.heartbeatTimeoutMs,
    rssLimitMiB: 1024 / 2 + DEFAULT_PROCESS_POOL.rssSlackMiB,
    recycleAfterRuns: DEFAULT_PROCESS_POOL.recycleAfterRuns,
    killGraceMs: DEFAULT_PROCESS_POOL.killGraceMs,
  });
  // The children's runtimes fill in the isolate reuse defaults themselves.
  expect(resolved.sessionIsolates).toBeUndefined();
});
