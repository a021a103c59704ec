/** A sandbox child's runtime module for tests: the real in-process runtime, announced on stdout. */
import type { SandboxRuntime } from '../../src/sandbox-runtime.ts';
import { createInProcessRuntime as createReal, type InProcessRuntimeOptions } from '../../sandbox/in-process-runtime.ts';

export function createInProcessRuntime(options?: InProcessRuntimeOptions): SandboxRuntime {
  console.log('noisy fixture: a line on the child’s stdout');
  return createReal(options);
}
