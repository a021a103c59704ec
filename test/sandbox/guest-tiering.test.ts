/**
 * sandbox/guest-tiering.ts: V8 does not optimize the guest's freezes (of values sent whole, and of
 * slices by their shape), whose compiled code would serve one context. Seen through V8's own trace
 * of its optimizing compilers, in a process of its own; a process started with a filter of its own
 * keeps it, which is also the control: there the same runs do optimize the freezes, so the trace
 * would show them if the filters failed.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GUEST_FREEZE_PREFIX } from '../../sandbox/guest-tiering.ts';

const probe = fileURLToPath(new URL('./guest-tiering.probe.ts', import.meta.url));

function runProbe(flags: string[]): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, ['--no-node-snapshot', '--trace-opt', ...flags, probe], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout })));
}

/** Lines of V8's trace that start or finish an optimized compile of one of the guest's freezes. */
function freezeCompiles(trace: string): string[] {
  return trace.split('\n').filter((line) => /compiling|optimizing/.test(line) && line.includes(`<JSFunction ${GUEST_FREEZE_PREFIX}`));
}

describe("the guest's freezes and V8's optimizing compilers", () => {
  it('run unoptimized, whole values and slices alike: neither Maglev nor TurboFan compiles them, however much they freeze', { timeout: 60_000 }, async () => {
    const { code, stdout } = await runProbe([]);
    expect(code).toBe(0);
    expect(stdout.trim().split('\n').at(-1)).toBe(JSON.stringify(Array(6).fill('10000')));
    expect(freezeCompiles(stdout)).toEqual([]);
  });

  it('are optimized as usual in a process started with a filter of its own (which it keeps)', { timeout: 60_000 }, async () => {
    const { code, stdout } = await runProbe(['--turbo-filter=*']);
    expect(code).toBe(0);
    expect(freezeCompiles(stdout).length).toBeGreaterThan(0);
  });
});
