/**
 * The sandbox runtimes every conformance test runs against. test/code-mode
 * builds its runtime with `createTestRuntime()`, which follows
 * `PTC_TEST_RUNTIME` (the vitest project `code-mode:process` sets it), so the
 * whole folder runs once per runtime. A suite outside that folder can loop
 * explicitly with `forEachRuntime`.
 */
import { describe } from 'vitest';
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
 * A runtime sized for tests: one warm isolate; in process mode one child that
 * takes many runs and lets them queue long (a retired child restarts slowly
 * on a busy machine).
 */
export function createTestRuntime(name: RuntimeName = selectedRuntime()): SandboxRuntime {
  return name === 'process'
    ? createProcessRuntime({ children: 1, runsPerChild: 16, warmPoolSize: 1, queueTimeoutMs: 60_000 })
    : createInProcessRuntime({ warmPoolSize: 1 });
}

/** Declares `body` once per runtime, each inside `describe('runtime: <name>')`. */
export function forEachRuntime(body: (name: RuntimeName) => void): void {
  for (const name of RUNTIME_NAMES) describe(`runtime: ${name}`, () => body(name));
}
