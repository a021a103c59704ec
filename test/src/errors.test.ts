import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.ts';

// Drift test: the catalogue and its documentation table must say the same thing.
describe('error catalogue', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map(
    doc
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => {
        const [code, description, fix] = line.split(' | ').map((cell) => cell.replace(/^\|? ?`?|`? ?\|?$/g, ''));
        return [code, { description, fix }] as const;
      }),
  );

  it('documents every code exactly once, and nothing else', () => {
    expect([...rows.keys()].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it.each(Object.entries(ERROR_CODES))('%s has the same description and fix in docs/errors.md', (code, entry) => {
    expect(rows.get(code)).toEqual({ description: entry.description, fix: entry.fix });
  });
});
