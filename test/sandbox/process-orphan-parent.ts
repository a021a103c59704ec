// A parent for the orphan test: starts a pool, prints its children's pids,
// then idles until it is killed.
import { createProcessRuntime } from '../../sandbox/process/process-runtime.ts';

const runtime = createProcessRuntime({ children: 2 });
await runtime.ready();
process.stdout.write(`${JSON.stringify(runtime.processes().map((child) => child.pid))}\n`);
setInterval(() => undefined, 60_000);
