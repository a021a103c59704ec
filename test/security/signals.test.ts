/**
 * Signals sent to the whole process group, as a terminal's Ctrl-C (SIGINT)
 * and systemd's KillMode=control-group (SIGTERM) do: the sandbox children
 * ignore them, the server drains its in-flight runs, and everyone exits.
 * And SIGKILL to the server alone: its sandbox children, left without a
 * parent, cancel their runs and exit rather than spin on as orphans.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { post, readSse } from '../services/helpers.ts';
import { serverDirs, startCliServer, type CliServer } from './cli-server.ts';

/** The pids whose parent is `pid` (Linux /proc). */
async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
  return text.trim().split(/\s+/).filter(Boolean).map(Number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('signals to the process group', () => {
  let server: CliServer | undefined;
  /** Sandbox children whose server was killed: a failed test must not leave them spinning. */
  let leftovers: number[] = [];
  afterEach(() => {
    // A failed test must not leave a server (and its group) behind.
    if (server !== undefined && server.child.exitCode === null && server.child.signalCode === null) process.kill(-server.child.pid!, 'SIGKILL');
    server = undefined;
    for (const pid of leftovers.filter(alive)) process.kill(pid, 'SIGKILL');
    leftovers = [];
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to the group: the in-flight run completes, the server drains and exits 0, no child is left`, { timeout: 60_000 }, async () => {
      const dirs = await serverDirs({ pool: { children: 1 } });
      server = await startCliServer(dirs, ['--runtime', 'process'], { detached: true });
      const pid = server.child.pid!;
      const response = await post(
        `${server.url}/v1/run`,
        { code: "console.log('started');\nawait new Promise((resolve) => setTimeout(resolve, 800));\nreturn 'finished';", sessionId: 'sig', callId: `sig-${signal}` },
        { accept: 'text/event-stream' },
      );
      let sandboxChildren: number[] = [];
      let signalled: Promise<void> | undefined;
      const events = await readSse(response, (event) => {
        // The run is in its sandbox child now: signal everyone in the group.
        if (event.event === 'log') {
          signalled = childrenOf(pid).then((kids) => {
            sandboxChildren = kids;
            process.kill(-pid, signal);
          });
        }
      });
      await signalled;
      expect(sandboxChildren.length).toBeGreaterThan(0);
      expect(events.at(-1)).toMatchObject({ event: 'result', data: { isError: false, value: { result: 'finished' } } });
      expect(await server.exited).toBe(0);
      expect(server.stderr()).not.toContain('crashed');
      expect(sandboxChildren.filter(alive)).toEqual([]);
    });
  }

  it('SIGKILL to the server alone while programs spin in its sandbox children: the children cancel them and leave', { timeout: 60_000 }, async () => {
    const dirs = await serverDirs({ pool: { children: 1 } });
    server = await startCliServer(dirs, ['--runtime', 'process'], { detached: true });
    const pid = server.child.pid!;
    let started = 0;
    let allStarted!: () => void;
    const spinning = new Promise<void>((resolve) => (allStarted = resolve));
    const streams = [0, 1].map(async (i) => {
      const response = await post(`${server!.url}/v1/run`, { code: "console.log('spinning');\nwhile (true) {}", sessionId: 'orphan', callId: `orphan-${i}` }, { accept: 'text/event-stream' });
      return readSse(response, (event) => {
        if (event.event === 'log' && ++started === 2) allStarted();
      }).catch(() => undefined);
    });
    await spinning;
    const sandboxChildren = await childrenOf(pid);
    expect(sandboxChildren.length).toBeGreaterThan(0);
    leftovers = sandboxChildren;
    process.kill(pid, 'SIGKILL');
    await Promise.all(streams);
    // No parent is left to kill them: each child must end its spinning runs and exit by itself.
    while (sandboxChildren.some(alive)) await delay(50);
  });
});
