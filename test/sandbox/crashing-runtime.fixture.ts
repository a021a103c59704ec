/**
 * A sandbox child's runtime module for tests: the real in-process runtime,
 * except that a program containing `CRASH_THE_CHILD` makes the child throw
 * an uncaught error once the run has started.
 */
import type { SandboxRuntime } from '../../src/sandbox-runtime.ts';
import { createInProcessRuntime as createReal, type InProcessRuntimeOptions } from '../../sandbox/in-process-runtime.ts';

export function createInProcessRuntime(options?: InProcessRuntimeOptions): SandboxRuntime {
  const real = createReal(options);
  return {
    ...real,
    kind: real.kind,
    run(request) {
      if (request.code.includes('CRASH_THE_CHILD')) {
        setTimeout(() => {
          throw new Error('the fixture crashes this child');
        }, 50);
      }
      return real.run(request);
    },
    ready: () => real.ready(),
    status: () => real.status(),
    close: () => real.close(),
  };
}
