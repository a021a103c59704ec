import { existsSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { LONGEST_FILES } from './sequencer.ts';

it('names only test files that exist, each once', () => {
  const root = path.resolve(import.meta.dirname, '..');
  for (const file of LONGEST_FILES) expect(existsSync(path.join(root, file)), file).toBe(true);
  expect(new Set(LONGEST_FILES).size).toBe(LONGEST_FILES.length);
});
