import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { AMBIENT_GLOBALS } from '../../typings/ambient.ts';
import { BUILTIN_TYPINGS_FILE, builtinTypings } from '../../typings/write-builtin.ts';
import { tscErrors } from './tsc.ts';

// A program using every built-in tool, as the model would write it.
const PROGRAM = [
  'const written = await tools.write({ file_path: "notes.txt", content: "one\\ntwo\\n" });',
  'const edited = await tools.edit({ file_path: "notes.txt", old_string: "two", new_string: "three" });',
  'const [page, found, hits] = await Promise.all([',
  '  tools.read({ file_path: "notes.txt", offset: 1, limit: 10 }),',
  '  tools.glob({ pattern: "**/*.txt" }),',
  '  tools.grep({ pattern: "th+ree", path: ".", glob: "*.txt", ignoreCase: true }),',
  ']);',
  'console.log(written.operation, edited.after.length, page.totalLines, found.paths.join(","));',
  'for (const match of hits.matches) console.log(`${match.path}:${match.lineNumber}: ${match.line}`);',
  'return page.lines.map((line) => line.text);',
].join('\n');

// The same tools, misused: a misspelt tool, a missing required argument, a wrong type, a misread output.
const WRONG_PROGRAM = [
  'await tools.raed({ file_path: "a" });',
  'await tools.edit({ file_path: "a", old_string: "x" });',
  'await tools.read({ file_path: "a", limit: "10" });',
  'const found = await tools.glob({ pattern: "*" });',
  'return found.files;',
].join('\n');

describe('typings/builtin.d.ts', () => {
  it('is compact: every description once, on one line each', async () => {
    const typings = await builtinTypings();
    // 5,744 bytes before compaction; nearly all that is left is the tools' own descriptions.
    expect(Buffer.byteLength(typings)).toBeLessThan(4_900);
    expect(typings).not.toMatch(/^\s*\/\*\*$/m);
    for (const description of ['Replace exact text in an existing text file', 'Match case-insensitively. Default false.', 'Lines in the whole file.']) {
      expect(typings.split(description)).toHaveLength(2);
    }
  });

  it('rejects a wrong program under tsc --strict, each mistake where it is', async () => {
    const typings = await readFile(BUILTIN_TYPINGS_FILE, 'utf8');
    const program = `export async function run(): Promise<unknown> {\n${WRONG_PROGRAM}\n}\n`;
    const errors = tscErrors({ 'builtin.d.ts': typings, 'globals.d.ts': AMBIENT_GLOBALS, 'program.ts': program });
    expect(errors.map((e) => e.split(' ', 2).join(' '))).toEqual([
      'program.ts:2:13 TS2339',
      'program.ts:3:18 TS2345',
      'program.ts:4:36 TS2322',
      'program.ts:6:14 TS2339',
    ]);
  });

  it('is current: regenerate it with `npm run typings`', async () => {
    const committed = await readFile(BUILTIN_TYPINGS_FILE, 'utf8');
    expect(committed).toBe(await builtinTypings());
  });

  it('compiles with tsc together with a program using every built-in tool', async () => {
    const typings = await readFile(BUILTIN_TYPINGS_FILE, 'utf8');
    const program = `export async function run(): Promise<unknown> {\n${PROGRAM}\n}\n`;
    expect(tscErrors({ 'builtin.d.ts': typings, 'globals.d.ts': AMBIENT_GLOBALS, 'program.ts': program })).toEqual([]);
  });
});
