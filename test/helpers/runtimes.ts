/**
 * The sandbox runtimes every conformance test runs against. A suite either
 * loops with `forEachRuntime`, or asks `createTestRuntime()` for the runtime
 * selected for this worker (`PTC_TEST_RUNTIME`, or `selectTestRuntime`).
 */
import { describe } from 'vitest';
import type { SandboxRuntime } from '../../src/sandbox-runtime.ts';
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { createProcessRuntime } from '../../sandbox/process/process-runtime.ts';

export type RuntimeName = 'in-process' | 'process';
export const RUNTIME_NAMES: readonly RuntimeName[] = ['in-process', 'process'];

let selected: RuntimeName = process.env.PTC_TEST_RUNTIME === 'process' ? 'process' : 'in-process';

/** Makes `createTestRuntime()` build `name` from now on (call it before the tests run). */
export function selectTestRuntime(name: RuntimeName): void {
  selected = name;
}

export function testRuntimeName(): RuntimeName {
  return selected;
}

/**
 * A runtime sized for tests: one warm isolate; in process mode one child that
 * takes many runs and lets them queue long (a retired child restarts slowly
 * on a busy machine).
 */
export function createTestRuntime(name: RuntimeName = selected): SandboxRuntime {
  return name === 'process'
    ? createProcessRuntime({ children: 1, runsPerChild: 16, warmPoolSize: 1, queueTimeoutMs: 60_000 })
    : createInProcessRuntime({ warmPoolSize: 1 });
}

/** Declares `body` once per runtime, each inside `describe('runtime: <name>')`. */
export function forEachRuntime(body: (name: RuntimeName) => void): void {
  for (const name of RUNTIME_NAMES) describe(`runtime: ${name}`, () => body(name));
}
