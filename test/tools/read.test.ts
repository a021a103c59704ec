import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers.ts';

let h: Harness;
beforeEach(async () => {
  h = await createHarness({ limits: { readPageLines: 3, maxLineChars: 10 } });
});
afterEach(async () => {
  await h.dispose();
});

describe('read', () => {
  it('returns the canonical DTO and renders numbered lines like cat -n', async () => {
    await h.file('src/a.txt', 'one\ntwo\n');
    const result = await h.call('read', { file_path: 'src/a.txt' });
    expect(result).toMatchObject({ isError: false });
    expect(result.value).toEqual({
      path: 'src/a.txt',
      offset: 1,
      lines: [
        { number: 1, text: 'one' },
        { number: 2, text: 'two' },
      ],
      totalLines: 2,
    });
    expect(h.text(result)).toBe('     1\tone\n     2\ttwo');
  });

  it('pages: default page size, offset and limit, with a note naming the next offset', async () => {
    await h.file('f.txt', 'a\nb\nc\nd\ne');
    const first = await h.call('read', { file_path: 'f.txt' });
    expect(first.value).toEqual({
      path: 'f.txt',
      offset: 1,
      lines: [
        { number: 1, text: 'a' },
        { number: 2, text: 'b' },
        { number: 3, text: 'c' },
      ],
      totalLines: 5,
    });
    expect(h.text(first)).toBe('     1\ta\n     2\tb\n     3\tc\n… 2 more lines; read with offset=4');
    const second = await h.call('read', { file_path: 'f.txt', offset: 4 });
    expect(second.value).toEqual({
      path: 'f.txt',
      offset: 4,
      lines: [
        { number: 4, text: 'd' },
        { number: 5, text: 'e' },
      ],
      totalLines: 5,
    });
    expect(h.text(second)).toBe('     4\td\n     5\te');
    expect(await h.value('read', { file_path: 'f.txt', offset: 2, limit: 1 })).toEqual({
      path: 'f.txt',
      offset: 2,
      lines: [{ number: 2, text: 'b' }],
      totalLines: 5,
    });
    // limit above the page size is clamped to it
    const big = await h.value<{ lines: unknown[] }>('read', { file_path: 'f.txt', limit: 100 });
    expect(big.lines).toHaveLength(3);
  });

  it('reports an offset past the end and an empty file without failing', async () => {
    await h.file('f.txt', 'a\n');
    await h.file('empty.txt', '');
    const past = await h.call('read', { file_path: 'f.txt', offset: 9 });
    expect(past.value).toEqual({ path: 'f.txt', offset: 9, lines: [], totalLines: 1 });
    expect(h.text(past)).toBe('(offset 9 is past the end: f.txt has 1 lines)');
    const empty = await h.call('read', { file_path: 'empty.txt' });
    expect(empty.value).toEqual({ path: 'empty.txt', offset: 1, lines: [], totalLines: 0 });
    expect(h.text(empty)).toBe('(empty.txt is empty)');
  });

  it('strips CRLF line endings and truncates long lines with a marker', async () => {
    await h.file('crlf.txt', 'x\r\n0123456789ABCDEF\r\n0123456789\r\n');
    expect(await h.value('read', { file_path: 'crlf.txt' })).toEqual({
      path: 'crlf.txt',
      offset: 1,
      lines: [
        { number: 1, text: 'x' },
        { number: 2, text: '0123456789… [line truncated: 16 characters]' },
        { number: 3, text: '0123456789' },
      ],
      totalLines: 3,
    });
  });

  it('streams large files: counts every line, keeps only the page', async () => {
    const many = Array.from({ length: 50_000 }, (_, i) => `line ${i + 1} ${'x'.repeat(i % 30)}`).join('\n');
    await h.file('big.txt', many);
    const value = await h.value<{ lines: { number: number; text: string }[]; totalLines: number }>('read', {
      file_path: 'big.txt',
      offset: 40_000,
      limit: 2,
    });
    expect(value.totalLines).toBe(50_000);
    expect(value.lines.map((l) => l.number)).toEqual([40_000, 40_001]);
    expect(value.lines[0].text.startsWith('line 40000')).toBe(true);
  });

  it('keeps multi-byte characters split across read chunks intact', async () => {
    const line = 'é'.repeat(40_000); // 80,000 bytes: crosses the 64 KiB chunk boundary
    const harness = await createHarness({ limits: { maxLineChars: 100_000 } });
    try {
      await harness.file('u.txt', `${line}\nnext`);
      const value = await harness.value<{ lines: { text: string }[] }>('read', { file_path: 'u.txt' });
      expect(value.lines.map((l) => l.text)).toEqual([line, 'next']);
    } finally {
      await harness.dispose();
    }
  });

  // The one test that pins the binary-file sentence (write and edit share it).
  it('refuses binary files with a clear message instead of dumping them', async () => {
    await h.file('bin.dat', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    expect(await h.failure('read', { file_path: 'bin.dat' })).toBe(
      '"bin.dat" is a binary file, not shown: only text files can be read or edited',
    );
  });

  it('fails clearly on a missing file, a directory and a negative offset', async () => {
    await h.file('dir/x.txt', 'x');
    expect(await h.failure('read', { file_path: 'nope.txt' })).toBe('"nope.txt" does not exist: check the path (glob can list files)');
    expect(await h.failure('read', { file_path: 'dir' })).toBe('"dir" is a directory: use glob to list its files');
    expect(await h.failure('read', { file_path: 'dir/x.txt', offset: -1 })).toBe('offset -1 is negative: pass a line number from 1');
  });

  it('is concurrency-safe; failures are TOOL_FAILED results naming the WorkspaceError', async () => {
    expect(h.registry.get('read')?.isConcurrencySafe({ file_path: 'x' })).toBe(true);
    const result = await h.call('read', { file_path: 'nope.txt' });
    expect(result.isError && result.error.info).toEqual({ name: 'WorkspaceError', code: 'TOOL_FAILED' });
    expect(h.text(result)).toBe('Error: "nope.txt" does not exist: check the path (glob can list files)');
  });
});
