/**
 * Node flags that leave V8's incremental marking under way whenever a process exits, advanced only
 * by the main thread's own allocation (no concurrent or parallel marker, no marking task): the
 * host objects a runtime's close drops just before the event loop ends are then still unvisited
 * at exit, every time. sandbox/exit-collection.ts is what makes such a process exit cleanly;
 * without it, isolated-vm aborts the process.
 */
export const FORCED_MARKING: readonly string[] = ['--stress-incremental-marking', '--no-concurrent-marking', '--no-parallel-marking', '--no-incremental-marking-task'];
