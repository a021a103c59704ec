/**
 * Constructs isolates off this thread. `new ivm.Isolate` is synchronous: it
 * sets up a V8 heap and the default context isolated-vm keeps, most of the
 * cost of preparing an isolate. Made on this thread, a burst's isolates are
 * made one after another while the other cores idle.
 *
 * So the factory keeps a few helper isolates, one per core (at most 8). Each
 * holds the isolated-vm module and runs only `MAKE` below: it constructs the isolate
 * and its context on isolated-vm's thread pool and hands both handles back
 * (isolated-vm handles are transferable). Calls alternate between helpers,
 * so construction runs on every core at once. No program ever runs in a
 * helper.
 *
 * One factory per process, made on first use (a process that never sees a
 * burst never pays for it), and never disposed: an isolate keeps calling
 * into the helper that made it (its `onCatastrophicError` handler lives
 * there), and isolated-vm crashes the process (SIGSEGV in
 * `IsolateHolder::ScheduleTask`) when it settles a call in a disposed
 * isolate. A helper holds about 1.2 MiB.
 */
import { availableParallelism } from 'node:os';
import ivm from 'isolated-vm';

export interface IsolateFactory {
  /** A new isolate of `memoryMiB` heap and a context in it; `onCatastrophicError` as isolated-vm's option. */
  make(memoryMiB: number, onCatastrophicError: (message: string) => void): Promise<{ isolate: ivm.Isolate; context: ivm.Context }>;
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

let shared: IsolateFactory | undefined;

/** Helpers at most, whatever the core count: each holds about 1.2 MiB, and 8 constructors at once outrun a burst's other work. */
const MAX_HELPERS = 8;

/** This process's factory, with one helper per core (up to {@link MAX_HELPERS}). */
export function isolateFactory(): IsolateFactory {
  shared ??= createIsolateFactory(Math.min(MAX_HELPERS, availableParallelism()));
  return shared;
}

function createIsolateFactory(helperCount: number): IsolateFactory {
  const helpers: ivm.Reference<unknown>[] = [];
  let next = 0;

  const helper = (): ivm.Reference<unknown> => {
    if (helpers.length < helperCount) {
      const isolate = new ivm.Isolate({ memoryLimit: HELPER_MEMORY_MIB });
      try {
        const context = isolate.createContextSync();
        context.global.setSync('ivm', ivm);
        helpers.push(context.evalSync(MAKE, { reference: true }) as ivm.Reference<unknown>);
      } catch (error) {
        // Nothing was made by this helper yet: disposing it is safe.
        isolate.dispose();
        throw error;
      }
      return helpers[helpers.length - 1];
    }
    next = (next + 1) % helpers.length;
    return helpers[next];
  };

  return {
    async make(memoryMiB, onCatastrophicError) {
      const onCatastrophe = new ivm.Reference((message: unknown) => onCatastrophicError(String(message)));
      const [isolate, context] = (await helper().apply(undefined, [memoryMiB, onCatastrophe], {
        result: { promise: true, copy: true },
      })) as [ivm.Isolate, ivm.Context];
      return { isolate, context };
    },
  };
}
