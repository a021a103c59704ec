import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Drift test for docs/architecture.md: the files it names exist, and every
// code comment that points at one of its sections names a section it has.
const root = new URL('..', import.meta.url).pathname;
const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
const headings = new Set([...doc.matchAll(/^## (.+)$/gm)].map((match) => match[1]));

function sourceFiles(): string[] {
  return ['src', 'sandbox', 'typings', 'services', 'compose', 'adapters', 'entries', 'test'].flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => join(dir, file)),
  );
}

describe('docs/architecture.md', () => {
  it('names only files and folders that exist', () => {
    const paths = [...doc.matchAll(/`((?:src|sandbox|typings|services|compose|adapters|entries|test)\/[\w./-]*)`/g)].map((match) => match[1]);
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((path) => !existsSync(join(root, path)))).toEqual([]);
  });

  it('has every section a code comment points at', () => {
    const cited = sourceFiles().flatMap((file) =>
      [...readFileSync(join(root, file), 'utf8').matchAll(/docs\/architecture\.md, "([^"]+)"/g)].map((match) => ({ file, section: match[1] })),
    );
    expect(cited.length).toBeGreaterThan(5);
    expect(cited.filter(({ section }) => !headings.has(section))).toEqual([]);
  });

  it('is linked from the README', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain('(docs/architecture.md)');
  });
});
