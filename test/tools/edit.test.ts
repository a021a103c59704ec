import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers.ts';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.dispose();
});
const contents = (relative: string) => readFile(path.join(h.root, relative), 'utf8');

describe('edit', () => {
  it('replaces a unique string: DTO, render, hunks and the file', async () => {
    await h.file('src/a.ts', 'const a = 1;\nconst b = 2;\n');
    const result = await h.call('edit', { file_path: 'src/a.ts', old_string: 'b = 2', new_string: 'b = 3' });
    expect(result.isError).toBe(false);
    expect(result.value).toEqual({ path: 'src/a.ts', before: 'const a = 1;\nconst b = 2;\n', after: 'const a = 1;\nconst b = 3;\n' });
    expect(h.text(result)).toBe('Edited src/a.ts');
    expect(result.meta).toEqual([
      { oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines: [' const a = 1;', '-const b = 2;', '+const b = 3;'] },
    ]);
    expect(await contents('src/a.ts')).toBe('const a = 1;\nconst b = 3;\n');
  });

  it('fails when old_string is not unique, naming the count and both ways out; the file is untouched', async () => {
    await h.file('f.txt', 'x = 1\nx = 1\nx = 1\n');
    expect(await h.failure('edit', { file_path: 'f.txt', old_string: 'x = 1', new_string: 'x = 2' })).toBe(
      'old_string occurs 3 times in "f.txt": include more surrounding lines to make it unique, or pass replace_all: true to replace all 3',
    );
    expect(await contents('f.txt')).toBe('x = 1\nx = 1\nx = 1\n');
  });

  it('replace_all replaces every occurrence', async () => {
    await h.file('f.txt', 'x = 1\ny\nx = 1\n');
    const result = await h.call('edit', { file_path: 'f.txt', old_string: 'x = 1', new_string: 'x = 2', replace_all: true });
    expect(result.value).toEqual({ path: 'f.txt', before: 'x = 1\ny\nx = 1\n', after: 'x = 2\ny\nx = 2\n' });
    expect(h.text(result)).toBe('Edited f.txt (2 replacements)');
    expect(await contents('f.txt')).toBe('x = 2\ny\nx = 2\n');
  });

  it('replace_all on a single occurrence, and more context making a string unique', async () => {
    await h.file('f.txt', 'a\nb\na\nc\n');
    expect(await h.value('edit', { file_path: 'f.txt', old_string: 'a\nc', new_string: 'A\nc' })).toEqual({
      path: 'f.txt',
      before: 'a\nb\na\nc\n',
      after: 'a\nb\nA\nc\n',
    });
    expect(await h.value('edit', { file_path: 'f.txt', old_string: 'b', new_string: 'B', replace_all: true })).toEqual({
      path: 'f.txt',
      before: 'a\nb\nA\nc\n',
      after: 'a\nB\nA\nc\n',
    });
  });

  it('inserts replacement text literally ($& and $1 are not patterns)', async () => {
    await h.file('f.txt', 'price\n');
    const value = await h.value<{ after: string }>('edit', { file_path: 'f.txt', old_string: 'price', new_string: '$& costs $1 $$' });
    expect(value.after).toBe('$& costs $1 $$\n');
  });

  it('fails clearly: missing old_string, empty old_string, identical strings, missing file', async () => {
    await h.file('f.txt', 'hello\n');
    expect(await h.failure('edit', { file_path: 'f.txt', old_string: 'bye', new_string: 'x' })).toBe(
      'old_string was not found in "f.txt": it must match the file exactly, whitespace and line breaks included (read the file first)',
    );
    expect(await h.failure('edit', { file_path: 'f.txt', old_string: '', new_string: 'x' })).toBe(
      'old_string is empty: pass the exact text to replace (use write to create a file)',
    );
    expect(await h.failure('edit', { file_path: 'f.txt', old_string: 'hello', new_string: 'hello' })).toBe(
      'old_string and new_string are the same: nothing would change',
    );
    expect(await h.failure('edit', { file_path: 'gone.txt', old_string: 'a', new_string: 'b' })).toBe(
      '"gone.txt" does not exist: check the path (glob can list files)',
    );
  });

  it('keeps a BOM and CRLF line endings byte for byte', async () => {
    await h.file('bom.txt', '\uFEFFa\r\nb\r\n');
    const value = await h.value<{ before: string; after: string }>('edit', { file_path: 'bom.txt', old_string: 'b', new_string: 'c' });
    expect(value.before).toBe('\uFEFFa\r\nb\r\n');
    expect(await readFile(path.join(h.root, 'bom.txt'), 'utf8')).toBe('\uFEFFa\r\nc\r\n');
  });

  it('matches LF-typed old_string in a CRLF file (read shows lines without CR) and keeps CRLF', async () => {
    await h.file('crlf.txt', 'k\r\nb\r\nc\r\nb\r\nc\r\n');
    const one = await h.call('edit', { file_path: 'crlf.txt', old_string: 'k\nb', new_string: 'K\nb' });
    expect(one.value).toEqual({ path: 'crlf.txt', before: 'k\r\nb\r\nc\r\nb\r\nc\r\n', after: 'K\r\nb\r\nc\r\nb\r\nc\r\n' });
    const all = await h.call('edit', { file_path: 'crlf.txt', old_string: 'b\nc', new_string: 'x\ny', replace_all: true });
    expect(h.text(all)).toBe('Edited crlf.txt (2 replacements)');
    expect(await contents('crlf.txt')).toBe('K\r\nx\r\ny\r\nx\r\ny\r\n');
  });

  it('refuses binary files and invalid UTF-8', async () => {
    await h.file('bin.dat', new Uint8Array([0x61, 0x00, 0x62]));
    await h.file('latin1.txt', new Uint8Array([0x63, 0x61, 0x66, 0xe9])); // "café" in Latin-1
    // The binary-file sentence is pinned in read.test.ts.
    expect(await h.failure('edit', { file_path: 'bin.dat', old_string: 'a', new_string: 'b' })).toMatch(/^"bin\.dat" is a binary file/);
    expect(await h.failure('edit', { file_path: 'latin1.txt', old_string: 'c', new_string: 'k' })).toBe(
      '"latin1.txt" is not valid UTF-8 text: it cannot be edited as text',
    );
  });
});
