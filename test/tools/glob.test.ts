import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './helpers.ts';

let h: Harness;
beforeEach(async () => {
  h = await createHarness({ limits: { renderPageSize: 3, maxResults: 50 } });
  await h.file('src/b.ts', '');
  await h.file('src/a.ts', '');
  await h.file('src/sub/c.ts', '');
  await h.file('src/d.js', '');
  await h.file('.hidden/e.ts', '');
  await h.file('node_modules/pkg/index.ts', '');
  await h.file('.git/HEAD.ts', '');
  await h.file('README.md', '');
});
afterEach(async () => {
  await h.dispose();
});

describe('glob', () => {
  it('returns sorted workspace-relative paths, dotfiles included, .git and node_modules skipped', async () => {
    const result = await h.call('glob', { pattern: '**/*.ts' });
    expect(result.value).toEqual({ paths: ['.hidden/e.ts', 'src/a.ts', 'src/b.ts', 'src/sub/c.ts'] });
    expect(h.text(result)).toBe('.hidden/e.ts\nsrc/a.ts\nsrc/b.ts\n… 1 more files not shown; narrow the pattern or path to see them');
  });

  it('matches relative to path, and walks only below the literal prefix of the pattern', async () => {
    expect(await h.value('glob', { pattern: '*.ts', path: 'src' })).toEqual({ paths: ['src/a.ts', 'src/b.ts'] });
    expect(await h.value('glob', { pattern: 'src/*.{ts,js}' })).toEqual({ paths: ['src/a.ts', 'src/b.ts', 'src/d.js'] });
    expect(await h.value('glob', { pattern: './src/sub/*' })).toEqual({ paths: ['src/sub/c.ts'] });
    expect(await h.value('glob', { pattern: 'sub/**', path: 'src' })).toEqual({ paths: ['src/sub/c.ts'] });
  });

  it('a literal pattern names one file; missing bases match nothing', async () => {
    expect(await h.value('glob', { pattern: 'README.md' })).toEqual({ paths: ['README.md'] });
    expect(await h.value('glob', { pattern: 'nope.md' })).toEqual({ paths: [] });
    expect(await h.value('glob', { pattern: 'nope/**/*.ts' })).toEqual({ paths: [] });
    const none = await h.call('glob', { pattern: '**/*.py' });
    expect(none.value).toEqual({ paths: [] });
    expect(h.text(none)).toBe('No files found');
  });

  it('value holds every collected path; render shows the first page and a cap note', async () => {
    for (let i = 0; i < 60; i++) await h.file(`many/f${String(i).padStart(2, '0')}.txt`, '');
    const result = await h.call('glob', { pattern: 'many/*.txt' });
    const paths = (result.value as { paths: string[] }).paths;
    expect(paths).toHaveLength(50);
    expect(paths[0]).toBe('many/f00.txt');
    expect(paths).toEqual([...paths].sort());
    expect(h.text(result)).toBe(
      'many/f00.txt\nmany/f01.txt\nmany/f02.txt\n' +
        '… 47 more files not shown; narrow the pattern or path to see them\n' +
        '(collection stopped at the cap of 50 files; there may be more: narrow the pattern or path)',
    );
  });

  it('ignoreDirectories is configurable', async () => {
    const harness = await createHarness({ ignoreDirectories: [] });
    try {
      await harness.file('node_modules/pkg/index.ts', '');
      expect(await harness.value('glob', { pattern: '**/*.ts' })).toEqual({ paths: ['node_modules/pkg/index.ts'] });
    } finally {
      await harness.dispose();
    }
  });

  it('fails clearly on an absolute or empty pattern and on a file as path; is concurrency-safe', async () => {
    expect(await h.failure('glob', { pattern: '/etc/*' })).toBe(
      'pattern "/etc/*" is absolute: pass a relative pattern and the directory as path',
    );
    expect(await h.failure('glob', { pattern: '' })).toBe('pattern is empty: pass a glob such as "**/*.ts"');
    expect(await h.failure('glob', { pattern: '*', path: 'README.md' })).toBe('path "README.md" is a file: pass a directory (or use read)');
    expect(h.registry.get('glob')?.isConcurrencySafe({ pattern: '*' })).toBe(true);
  });
});
