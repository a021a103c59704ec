import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ISOLATE_HOST_FLAGS } from '../../sandbox/host-flags.ts';

// In a process of its own: the fault it guards against (isolated-vm touching a disposed
// crossing's freed state) deadlocks or hangs the whole process, which no in-process assertion sees.
it('isolates disposed while the guest waits on a call leave the process able to go on and to exit', async () => {
  const probe = fileURLToPath(new URL('./dispose-during-call.probe.ts', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [...ISOLATE_HOST_FLAGS, probe], { timeout: 25_000 });
  expect(JSON.parse(stdout.trim())).toEqual({ ABORTED: 200 });
});
