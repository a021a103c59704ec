/**
 * A sandbox runtime that loads its implementation (and so isolated-vm's
 * native addon) on first use: importing the library costs nothing until a
 * program runs or `ready()` is awaited.
 */
import type { SandboxPoolStatus, SandboxRunOutcome, SandboxRunRequest, SandboxRuntime } from '../src/sandbox-runtime.ts';

export interface LazyRuntime extends SandboxRuntime {
  /** Loads the implementation and creates the runtime (its warm pool starts filling) without waiting for it to be ready. */
  load(): Promise<void>;
}

export function lazyRuntime(kind: string, load: () => Promise<SandboxRuntime>): LazyRuntime {
  let loading: Promise<SandboxRuntime> | undefined;
  let loaded: SandboxRuntime | undefined;
  let closed = false;
  const get = (): Promise<SandboxRuntime> => {
    loading ??= load().then((runtime) => {
      loaded = runtime;
      // Closed while loading: close what arrived, or it would hold isolates or children forever.
      if (closed) void runtime.close();
      return runtime;
    });
    return loading;
  };
  return {
    kind,
    async load(): Promise<void> {
      await get();
    },
    async run(request: SandboxRunRequest): Promise<SandboxRunOutcome> {
      if (closed) return { ok: false, logs: [], failure: { kind: 'crashed', message: 'the sandbox runtime is closed: create code mode again to run programs' } };
      let runtime: SandboxRuntime;
      try {
        runtime = await get();
      } catch {
        // run() never rejects; the load error (a missing native addon) is the host's to see through ready().
        return { ok: false, logs: [], failure: { kind: 'crashed', message: 'the sandbox could not be started; run the program again later' } };
      }
      return runtime.run(request);
    },
    async ready(): Promise<void> {
      await (await get()).ready();
    },
    status(): SandboxPoolStatus {
      return loaded?.status() ?? { children: 0, busy: 0, queued: 0, restarts: 0 };
    },
    async close(): Promise<void> {
      closed = true;
      if (loading !== undefined) await (await loading.catch(() => undefined))?.close();
    },
  };
}
