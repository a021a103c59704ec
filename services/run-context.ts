/**
 * Live console lines for one run. The sandbox reports lines through
 * `SandboxRunRequest.onLog`, deep inside code mode; wrapping the runtime with
 * {@link tapRuntime} forwards them to whichever HTTP request started the run,
 * found through AsyncLocalStorage (the run starts inside that request's
 * async context). Without the tap, streams get the logs at the end instead.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { SandboxRuntime } from '../src/sandbox-runtime.ts';

export interface RunContext {
  onLog(line: string): void;
}

const storage = new AsyncLocalStorage<RunContext>();

export function withRunContext<T>(context: RunContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** A runtime that also reports each log line to the current {@link RunContext}. */
export function tapRuntime(runtime: SandboxRuntime): SandboxRuntime {
  return {
    kind: runtime.kind,
    run(request) {
      const context = storage.getStore();
      if (context === undefined) return runtime.run(request);
      const inner = request.onLog;
      return runtime.run({
        ...request,
        onLog(line) {
          inner?.(line);
          context.onLog(line);
        },
      });
    },
    ready: () => runtime.ready(),
    status: () => runtime.status(),
    close: () => runtime.close(),
  };
}
