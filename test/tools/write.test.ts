import { readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { diskShortage } from '../../src/tools/text-file.ts';
import { createHarness, type Harness } from './helpers.ts';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.dispose();
});

describe('write', () => {
  it('creates a file and its parent directories: DTO, render and hunks', async () => {
    const result = await h.call('write', { file_path: 'a/b/new.txt', content: 'one\ntwo\n' });
    expect(result.isError).toBe(false);
    expect(result.value).toEqual({ path: 'a/b/new.txt', operation: 'create', before: null, after: 'one\ntwo\n' });
    expect(h.text(result)).toBe('Created a/b/new.txt (2 lines)');
    expect(result.meta).toEqual([{ oldStart: 0, oldLines: 0, newStart: 1, newLines: 2, lines: ['+one', '+two'] }]);
    expect(await readFile(path.join(h.root, 'a/b/new.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('updates an existing file: before is the old content', async () => {
    await h.file('f.txt', 'a\nb\nc\n');
    const result = await h.call('write', { file_path: 'f.txt', content: 'a\nB\nc\n' });
    expect(result.value).toEqual({ path: 'f.txt', operation: 'update', before: 'a\nb\nc\n', after: 'a\nB\nc\n' });
    expect(h.text(result)).toBe('Updated f.txt (3 lines)');
    expect(result.meta).toEqual([{ oldStart: 1, oldLines: 3, newStart: 1, newLines: 3, lines: [' a', '-b', '+B', ' c'] }]);
    expect(await readFile(path.join(h.root, 'f.txt'), 'utf8')).toBe('a\nB\nc\n');
  });

  it("keeps the disk's reserve: a write or edit that would leave less free fails no-space and writes nothing", async () => {
    // A reserve larger than any disk: every change would break it.
    const full = await createHarness({ limits: { minFreeDiskMiB: 2 ** 40 } });
    try {
      await full.file('kept.txt', 'old\n');
      const write = await full.call('write', { file_path: 'a/new.txt', content: 'x' });
      expect(write).toMatchObject({ isError: true, error: { info: { code: 'TOOL_FAILED' } } });
      expect(full.text(write)).toContain(`writing "a/new.txt" (1 bytes) would leave the workspace's disk with less free space than the ${2 ** 40} MiB it keeps`);
      const edit = await full.call('edit', { file_path: 'kept.txt', old_string: 'old', new_string: 'new and longer' });
      expect(full.text(edit)).toContain('would leave the workspace\'s disk with less free space');
      await expect(readFile(path.join(full.root, 'a/new.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
      expect(await readFile(path.join(full.root, 'kept.txt'), 'utf8')).toBe('old\n');
    } finally {
      await full.dispose();
    }
    // The default reserve (256 MiB) lets this machine's writes through; 0 turns the check off.
    const off = await createHarness({ limits: { minFreeDiskMiB: 0 } });
    try {
      expect((await off.call('write', { file_path: 'b.txt', content: 'y' })).isError).toBe(false);
    } finally {
      await off.dispose();
    }
  });

  it('names what a nearly full disk lacks: free space, or free inodes (a disk that cannot be filled here, as figures)', () => {
    const MiB = 1024 * 1024;
    const disk = { bsize: 4096, bavail: (512 * MiB) / 4096, files: 1_000_000, ffree: 500_000 };
    expect(diskShortage(disk, 1024, 256)).toBeUndefined();
    expect(diskShortage(disk, 300 * MiB, 256)).toBe('less free space than the 256 MiB it keeps');
    expect(diskShortage({ ...disk, ffree: 9_999 }, 1024, 256)).toBe('almost no free inodes (9999 left; each new file or folder takes one)');
    // A small filesystem keeps 1 % of its inodes; one that does not count them is never short of them.
    expect(diskShortage({ ...disk, files: 100_000, ffree: 1_500 }, 1024, 256)).toBeUndefined();
    expect(diskShortage({ ...disk, files: 100_000, ffree: 999 }, 1024, 256)).toMatch(/inodes/);
    expect(diskShortage({ ...disk, files: 0, ffree: 0 }, 1024, 256)).toBeUndefined();
  });

  it('refuses an absolute path even inside the workspace (the same answer as outside: no oracle)', async () => {
    const target = path.join(h.root, 'abs.txt');
    expect(await h.failure('write', { file_path: target, content: 'x' })).toBe(
      `"${target}" is an absolute path: pass a path relative to the workspace root, such as "src/index.ts"`,
    );
    await expect(readFile(target)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('writes through a symlink that stays inside the workspace', async () => {
    await h.file('real/target.txt', 'old');
    await symlink(path.join(h.root, 'real'), path.join(h.root, 'alias'));
    const value = await h.value('write', { file_path: 'alias/target.txt', content: 'new' });
    expect(value).toEqual({ path: 'alias/target.txt', operation: 'update', before: 'old', after: 'new' });
    expect(await readFile(path.join(h.root, 'real/target.txt'), 'utf8')).toBe('new');
  });

  it('refuses to overwrite a binary file or a directory', async () => {
    await h.file('bin.dat', new Uint8Array([1, 0, 2]));
    await h.file('dir/x', 'x');
    // The binary-file sentence is pinned in read.test.ts.
    expect(await h.failure('write', { file_path: 'bin.dat', content: 'x' })).toMatch(/^"bin\.dat" is a binary file/);
    expect(await h.failure('write', { file_path: 'dir', content: 'x' })).toBe('"dir" is a directory, not a file: pass a file path');
  });

  it('refuses content over the size limit', async () => {
    const small = await createHarness({ limits: { maxEditBytes: 4 } });
    try {
      expect(await small.failure('write', { file_path: 'f.txt', content: 'hello' })).toBe(
        '"f.txt" is 5 bytes, over the 4-byte limit for write and edit: change it in smaller files or with another tool',
      );
    } finally {
      await small.dispose();
    }
  });

  it('is exclusive (not concurrency-safe)', () => {
    expect(h.registry.get('write')?.isConcurrencySafe({ file_path: 'x', content: '' })).toBe(false);
    expect(h.registry.get('edit')?.isConcurrencySafe({ file_path: 'x', old_string: 'a', new_string: 'b' })).toBe(false);
  });
});

describe('createBuiltinTools options', () => {
  it('refuses a non-positive or fractional limit, naming it', async () => {
    const { createBuiltinTools } = await import('../../src/tools/index.ts');
    expect(() => createBuiltinTools({ workspace: h.root, limits: { maxResults: 0 } })).toThrow('invalid built-in tool limits: limits.maxResults: must be >= 1');
    expect(() => createBuiltinTools({ workspace: h.root, limits: { readPageLines: 1.5 } })).toThrow('invalid built-in tool limits: limits.readPageLines: must be integer');
    expect(() => createBuiltinTools({ workspace: h.root, limits: { searchTimeoutMs: 2 ** 31, searchWorkers: 65 } })).toThrow(
      'invalid built-in tool limits: limits.searchTimeoutMs: must be <= 2147483647; limits.searchWorkers: must be <= 64',
    );
  });

  it('registers exactly the five tools with their model-visible schemas', () => {
    expect(h.registry.schemas().map((s) => [s.name, Object.keys(s.parameters.properties ?? {})])).toEqual([
      ['edit', ['file_path', 'old_string', 'new_string', 'replace_all']],
      ['glob', ['pattern', 'path']],
      ['grep', ['pattern', 'path', 'glob', 'ignoreCase']],
      ['read', ['file_path', 'offset', 'limit']],
      ['write', ['file_path', 'content']],
    ]);
    expect(h.registry.schemas().map((s) => s.parameters.required)).toEqual([
      ['file_path', 'old_string', 'new_string'],
      ['pattern'],
      ['pattern'],
      ['file_path'],
      ['file_path', 'content'],
    ]);
  });
});
