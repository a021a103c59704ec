/**
 * One full garbage collection when a thread that made isolates exits.
 *
 * isolated-vm's host objects (Isolate, Context, Reference, Callback, ...)
 * free their native side from V8 weak callbacks, and those callbacks need
 * isolated-vm's environment for the thread. When a thread's event loop ends
 * (the main thread's or a worker's), Node runs isolated-vm's cleanup hook,
 * which tears that environment down, and only then disposes the thread's V8
 * isolate. Disposing finishes any incremental marking still under way. A host
 * object that became garbage after the last collection then runs its weak
 * callback with no environment, and isolated-vm aborts the whole process:
 * `IsolateEnvironment::GetCurrent(): Assertion 'environment != nullptr' failed`.
 * Objects dropped by a runtime's close, just before the loop ends, are
 * exactly those (kept isolates, the warm pool).
 *
 * 'exit' comes before the cleanup hooks: a full collection there runs those
 * callbacks while the environment still stands, and leaves no marking under
 * way for the disposal to finish. `v8.queryObjects` is Node's documented way
 * to collect everything without `--expose-gc`; what it counts is unused.
 * It costs one full collection, once, at exit.
 */
import { queryObjects } from 'node:v8';

/** Nothing is ever made of it: queryObjects needs a constructor to count. */
class NoInstances {}

let installed = false;

/** Installs the collection on this thread's 'exit', once. Call it before making the first isolate. */
export function collectAtExit(): void {
  if (installed) return;
  installed = true;
  process.once('exit', () => void queryObjects(NoInstances));
}
