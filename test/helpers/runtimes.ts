/**
 * The sandbox runtimes every conformance test runs against. test/code-mode
 * and test/sandbox build their runtime with `createTestRuntime()`, which
 * follows `PTC_TEST_RUNTIME` (the vitest project `process-runtime` sets it),
 * so both folders run once per runtime.
 */
import type { SandboxRuntime } from '../../src/sandbox-runtime.ts';
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { createProcessRuntime } from '../../sandbox/process/process-runtime.ts';

export type RuntimeName = 'in-process' | 'process';
export const RUNTIME_NAMES: readonly RuntimeName[] = ['in-process', 'process'];

/** The runtime this worker tests: `PTC_TEST_RUNTIME`, default `in-process`. */
export function selectedRuntime(): RuntimeName {
  return process.env.PTC_TEST_RUNTIME === 'process' ? 'process' : 'in-process';
}

/**
 * A runtime sized for tests: one warm isolate (of `warmPoolMemoryMiB`, default
 * 128); in process mode one child that takes many runs and lets them queue
 * long (a retired child restarts slowly on a busy machine). Isolates are kept
 * for a session's next run (the default), so the conformance suite, whose
 * runs share a session, also runs programs in reused isolates.
 */
export function createTestRuntime(name: RuntimeName = selectedRuntime(), options: { warmPoolMemoryMiB?: number } = {}): SandboxRuntime {
  return name === 'process'
    ? createProcessRuntime({ children: 1, runsPerChild: 16, warmPoolSize: 1, queueTimeoutMs: 60_000, ...options })
    : createInProcessRuntime({ warmPoolSize: 1, ...options });
}
