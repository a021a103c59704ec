/**
 * sandbox/exit-collection.ts: a process that made isolates, kept some for
 * sessions, closed its runtime and left its event loop exits 0, even with
 * V8's incremental marking under way at exit. Without the collection at
 * 'exit', about two processes in five abort in isolated-vm under
 * --stress-incremental-marking (exit-after-close.probe.ts): eight in a row
 * exiting cleanly is what the test asks.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const probe = fileURLToPath(new URL('./exit-after-close.probe.ts', import.meta.url));

function runProbe(): Promise<{ code: number | null; signal: string | null; stdout: string }> {
  const child = spawn(process.execPath, ['--no-node-snapshot', '--stress-incremental-marking', probe], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout: stdout.trim() })));
}

describe('leaving a process after kept isolates were closed', () => {
  it('exits 0, not by SIGABRT in isolated-vm, with incremental marking under way', { timeout: 120_000 }, async () => {
    const expected = { code: 0, signal: null, stdout: JSON.stringify({ results: Array(8).fill('42'), reused: 4 }) };
    for (let pair = 0; pair < 4; pair++) {
      expect(await Promise.all([runProbe(), runProbe()])).toEqual([expected, expected]);
    }
  });
});
