/**
 * sandbox/guest-tiering.ts: the library sets no V8 flag of its host's process; a host opts in to
 * the filters that keep the guest's freezes unoptimized. Observed in a process of its own by
 * forcing V8 to optimize a host function named like the freezes (and a control named otherwise):
 * the filters, when set, make V8 refuse it, whatever its budget. The process runtime's children,
 * which the library owns, are checked by the flags they were started with.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GUEST_FREEZE_FLAGS, GUEST_FREEZE_PREFIX } from '../../sandbox/guest-tiering.ts';
import { processRuntime } from './process-helpers.ts';
import { ISOLATE_HOST_FLAGS } from '../../sandbox/host-flags.ts';

const probe = fileURLToPath(new URL('./guest-tiering.probe.ts', import.meta.url));
const freezeNamed = `${GUEST_FREEZE_PREFIX}Probe`;

function runProbe(flags: string[], args: string[] = []): Promise<Record<string, boolean>> {
  const child = spawn(process.execPath, [...ISOLATE_HOST_FLAGS, '--allow-natives-syntax', ...flags, probe, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, boolean>) : reject(new Error(`probe exited ${code}`)))),
  );
}

describe("the guest's freezes and V8's optimizing compilers", () => {
  it('running programs leaves the host process flags alone: a function named like the freezes still optimizes', { timeout: 60_000 }, async () => {
    expect(await runProbe([])).toEqual({ [freezeNamed]: true, otherProbe: true });
  });

  it('keepGuestFreezeUnoptimized() opts the process in: such functions no longer optimize, others do', { timeout: 60_000 }, async () => {
    expect(await runProbe([], ['opt-in'])).toEqual({ [freezeNamed]: false, otherProbe: true });
  });

  it('starting Node with GUEST_FREEZE_FLAGS opts in as well', { timeout: 60_000 }, async () => {
    expect(await runProbe([...GUEST_FREEZE_FLAGS])).toEqual({ [freezeNamed]: false, otherProbe: true });
  });

  it('a process started with a filter of its own keeps it, opt-in or not', { timeout: 60_000 }, async () => {
    expect(await runProbe(['--turbo-filter=*'], ['opt-in'])).toEqual({ [freezeNamed]: true, otherProbe: true });
  });

  it("the process runtime's children, the library's own processes, start with the flags unless given filters of their own", { timeout: 60_000 }, async () => {
    const flagsOfChild = async (execArgv: string[]): Promise<string[]> => {
      const runtime = processRuntime({ children: 1, execArgv });
      try {
        await runtime.ready();
        const [child] = runtime.processes();
        return (await readFile(`/proc/${child!.pid}/cmdline`, 'utf8')).split('\0');
      } finally {
        await runtime.close();
      }
    };
    expect(await flagsOfChild([])).toEqual(expect.arrayContaining([...ISOLATE_HOST_FLAGS, ...GUEST_FREEZE_FLAGS]));
    const own = await flagsOfChild(['--turbo-filter=*']);
    expect(own).toContain('--turbo-filter=*');
    expect(own.filter((flag) => GUEST_FREEZE_FLAGS.includes(flag))).toEqual([]);
  });
});
