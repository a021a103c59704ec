// Run in a process of its own: a process runtime whose child outlives the kill grace, closed with
// nothing else keeping the event loop alive. Prints `closed` once close() resolved.
import { createProcessRuntime } from '../../sandbox/process/process-runtime.ts';

// The grace runs out before the child can leave on its own, so it is killed, and its exit is the
// last thing this process waits for.
const runtime = createProcessRuntime({ children: 1, warmPoolSize: 0, killGraceMs: 1 });
await runtime.ready();
await runtime.close();
console.log('closed');
