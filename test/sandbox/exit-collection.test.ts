/**
 * sandbox/exit-collection.ts: a process that made isolates, kept some for
 * sessions, closed its runtime and left its event loop exits 0, even with
 * V8's incremental marking under way at exit. The probe forces that state:
 * --stress-incremental-marking keeps marking under way, and with no
 * concurrent or parallel marker and no marking task, marking advances only
 * by the main thread's own allocation, so the host objects the close drops
 * are still unvisited when the process exits. Without the collection at
 * 'exit', such a process aborts in isolated-vm every time.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ISOLATE_HOST_FLAGS } from '../../sandbox/host-flags.ts';
import { FORCED_MARKING } from '../helpers/forced-marking.ts';

const probe = fileURLToPath(new URL('./exit-after-close.probe.ts', import.meta.url));

function runProbe(): Promise<{ code: number | null; signal: string | null; stdout: string }> {
  const child = spawn(process.execPath, [...ISOLATE_HOST_FLAGS, ...FORCED_MARKING, probe], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout: stdout.trim() })));
}

describe('leaving a process after kept isolates were closed', () => {
  it('exits 0, not by SIGABRT in isolated-vm, with incremental marking under way', { timeout: 60_000 }, async () => {
    expect(await runProbe()).toEqual({ code: 0, signal: null, stdout: JSON.stringify({ results: Array(8).fill('42'), reused: 4 }) });
  });
});
