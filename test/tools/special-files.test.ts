/**
 * FIFOs and sockets in the workspace: every tool refuses them before opening
 * (a FIFO open() blocks a host thread until a writer comes), and the walks
 * of grep and glob skip them.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTextFile } from '../../src/tools/text-file.ts';
import { createHarness, type Harness } from './helpers.ts';

let h: Harness;
let server: Server;
beforeEach(async () => {
  h = await createHarness();
  await h.file('dir/plain.txt', 'needle\n');
  execFileSync('mkfifo', [path.join(h.root, 'dir/pipe')]);
  server = createServer();
  await new Promise<void>((resolve) => server.listen(path.join(h.root, 'dir/sock'), resolve));
});
afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await h.dispose();
});

const FIFO = '"dir/pipe" is a named pipe (FIFO), not a regular file: the workspace tools only use regular files and directories';
const SOCKET = '"dir/sock" is a socket, not a regular file: the workspace tools only use regular files and directories';

describe('special files', () => {
  it('read, write, edit and grep refuse a FIFO and a socket by name, with reason not-a-file', async () => {
    for (const [file, message] of [
      ['dir/pipe', FIFO],
      ['dir/sock', SOCKET],
    ] as const) {
      // Four reads at once: before the fix each held a libuv thread in open() for good.
      const reads = await Promise.all(Array.from({ length: 4 }, () => h.failure('read', { file_path: file })));
      expect(reads).toEqual(Array(4).fill(message));
      expect(await h.failure('write', { file_path: file, content: 'x' })).toBe(message);
      expect(await h.failure('edit', { file_path: file, old_string: 'a', new_string: 'b' })).toBe(message);
      expect(await h.failure('grep', { pattern: 'x', path: file })).toBe(message);
    }
  });

  it('a link to a FIFO is refused the same way', async () => {
    execFileSync('ln', ['-s', 'pipe', path.join(h.root, 'dir/link')]);
    expect(await h.failure('read', { file_path: 'dir/link' })).toBe(FIFO.replace('"dir/pipe"', '"dir/link"'));
  });

  it('grep and glob walks skip them; ordinary files are still found', async () => {
    expect(await h.value('grep', { pattern: 'needle' })).toEqual({ matches: [{ path: 'dir/plain.txt', lineNumber: 1, line: 'needle' }] });
    expect(await h.value('glob', { pattern: '**/*' })).toEqual({ paths: ['dir/plain.txt'] });
    execFileSync('ln', ['-s', 'pipe', path.join(h.root, 'dir/link')]);
    expect(await h.value('grep', { pattern: 'needle', path: 'dir' })).toEqual({ matches: [{ path: 'dir/plain.txt', lineNumber: 1, line: 'needle' }] });
  });

  it('a FIFO swapped in after the path check is still refused without blocking (O_NONBLOCK + fstat)', async () => {
    // readTextFile is what write and edit call after resolving: give it the FIFO directly.
    await expect(readTextFile(path.join(h.root, 'dir/pipe'), 'dir/pipe', 1024, new AbortController().signal)).rejects.toMatchObject({
      reason: 'not-a-file',
      message: FIFO,
    });
  });
});
