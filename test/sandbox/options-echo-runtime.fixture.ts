/** A sandbox child's runtime module for tests: every run returns the options the child's runtime was made with. */
import type { SandboxRuntime } from '../../src/sandbox-runtime.ts';
import type { InProcessRuntimeOptions } from '../../sandbox/in-process-runtime.ts';

export function createInProcessRuntime(options: InProcessRuntimeOptions = {}): SandboxRuntime {
  return {
    kind: 'options-echo',
    run: () => Promise.resolve({ ok: true, logs: [], resultJson: JSON.stringify(options) }),
    ready: () => Promise.resolve(),
    status: () => ({ children: 0, busy: 0, queued: 0, restarts: 0 }),
    close: () => Promise.resolve(),
  };
}
