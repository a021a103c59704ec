/**
 * `createInProcessRuntime`: the `SandboxRuntime` that runs each program in a
 * fresh isolated-vm isolate in this process. The library default: fastest,
 * but a V8 abort takes the process with it (use the process runtime to
 * contain that).
 */
import type { SandboxPoolStatus, SandboxRunOutcome, SandboxRunRequest, SandboxRuntime } from '../src/sandbox-runtime.ts';
import { runInIsolate } from './isolate-run.ts';
import { DEFAULT_FILENAME } from './reserved-names.ts';
import { stripProgram } from './strip-types.ts';
import { createWarmPool } from './warm-pool.ts';

export interface InProcessRuntimeOptions {
  /** Never-used isolates kept ready. Default 2; 0 creates every isolate on the request path. */
  warmPoolSize?: number;
  /**
   * Heap of the pooled isolates, MiB. Default 128. A run asking for another
   * heap size gets a freshly made isolate (slower, same behaviour).
   */
  warmPoolMemoryMiB?: number;
}

export function createInProcessRuntime(options: InProcessRuntimeOptions = {}): SandboxRuntime {
  const pool = createWarmPool(options.warmPoolSize ?? 2, options.warmPoolMemoryMiB ?? 128);
  const active = new Set<Promise<SandboxRunOutcome>>();
  let closed = false;

  const runOnce = async (request: SandboxRunRequest): Promise<SandboxRunOutcome> => {
    const stripped = await stripProgram(request.code, request.filename ?? DEFAULT_FILENAME);
    if (!stripped.ok) return { ok: false, logs: [], failure: stripped.failure };
    if (request.signal.aborted) return { ok: false, logs: [], failure: { kind: 'abort', message: 'the run was cancelled before it started' } };
    let prepared;
    try {
      prepared = await pool.take(request.limits.memoryMiB);
    } catch {
      return { ok: false, logs: [], failure: { kind: 'crashed', message: 'the sandbox could not start an isolate; run the program again' } };
    }
    return runInIsolate(prepared, stripped.js, request);
  };

  return {
    kind: 'in-process',
    run(request) {
      if (closed) {
        return Promise.resolve({ ok: false, logs: [], failure: { kind: 'busy', message: 'the sandbox runtime is closed' } });
      }
      const run = runOnce(request);
      active.add(run);
      void run.finally(() => {
        active.delete(run);
        pool.refill();
      });
      return run;
    },
    ready: () => pool.filled(),
    status(): SandboxPoolStatus {
      return { children: 0, busy: active.size, queued: 0, restarts: 0 };
    },
    async close() {
      closed = true;
      pool.close();
      await Promise.allSettled([...active]);
    },
  };
}
