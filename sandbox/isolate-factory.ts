/**
 * Constructs isolates off this thread. `new ivm.Isolate` is synchronous: it
 * sets up a V8 heap and the default context isolated-vm keeps, about half
 * the cost of preparing an isolate. Made on this thread, a burst's isolates
 * are made one after another while the other cores idle.
 *
 * So the factory keeps a few helper isolates, one per core. Each holds the
 * isolated-vm module and runs only `MAKE` below: it constructs the isolate
 * and its context on isolated-vm's thread pool and hands both handles back
 * (isolated-vm handles are transferable). Calls alternate between helpers,
 * so construction runs on every core at once. No program ever runs in a
 * helper. Helpers are made on first use: a runtime that never sees a burst
 * never pays for them.
 */
import { availableParallelism } from 'node:os';
import ivm from 'isolated-vm';

export interface IsolateFactory {
  /** A new isolate of `memoryMiB` heap and a context in it; `onCatastrophicError` as isolated-vm's option. */
  make(memoryMiB: number, onCatastrophicError: (message: string) => void): Promise<{ isolate: ivm.Isolate; context: ivm.Context }>;
  /** Disposes the helpers; isolates already made are unaffected. */
  close(): void;
}

// The helper's only code. A synchronous isolated-vm call on another isolate is refused inside an
// asynchronous call, hence `createContext()`, which runs on the new isolate's own thread.
const MAKE = `(async function make(memoryLimit, onCatastrophe) {
  const isolate = new ivm.Isolate({ memoryLimit, onCatastrophicError: (message) => onCatastrophe.applyIgnored(undefined, [String(message)]) });
  try {
    const context = await isolate.createContext();
    return new ivm.ExternalCopy([isolate, context]).copyInto({ release: true });
  } catch (error) {
    isolate.dispose();
    throw error;
  }
})`;

/** Heap of a helper, MiB: it holds only `MAKE` and the handles in flight. */
const HELPER_MEMORY_MIB = 16;

interface Helper {
  isolate: ivm.Isolate;
  make: ivm.Reference<unknown>;
}

export function createIsolateFactory(helperCount = availableParallelism()): IsolateFactory {
  const helpers: Helper[] = [];
  let next = 0;
  let closed = false;

  const helper = (): Helper => {
    if (helpers.length < helperCount) {
      const isolate = new ivm.Isolate({ memoryLimit: HELPER_MEMORY_MIB });
      try {
        const context = isolate.createContextSync();
        context.global.setSync('ivm', ivm);
        const make = context.evalSync(MAKE, { reference: true }) as ivm.Reference<unknown>;
        helpers.push({ isolate, make });
      } catch (error) {
        if (!isolate.isDisposed) isolate.dispose();
        throw error;
      }
      return helpers[helpers.length - 1];
    }
    next = (next + 1) % helpers.length;
    return helpers[next];
  };

  return {
    async make(memoryMiB, onCatastrophicError) {
      if (closed) throw new Error('the isolate factory is closed');
      const onCatastrophe = new ivm.Reference((message: unknown) => onCatastrophicError(String(message)));
      const [isolate, context] = (await helper().make.apply(undefined, [memoryMiB, onCatastrophe], {
        result: { promise: true, copy: true },
      })) as [ivm.Isolate, ivm.Context];
      return { isolate, context };
    },
    close() {
      closed = true;
      for (const { isolate } of helpers.splice(0)) if (!isolate.isDisposed) isolate.dispose();
    },
  };
}
