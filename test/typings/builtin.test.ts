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
  it('is compact: at most 2,600 bytes, one line per member block and doc comment', async () => {
    const typings = await builtinTypings();
    // What the model is shown: all but the file's first line, a note for people. 5,744 bytes before compaction.
    const shown = typings.slice(typings.indexOf('\n') + 1);
    expect(shown.startsWith('type JsonValue')).toBe(true);
    expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(2_600);
    expect(typings).not.toMatch(/^\s*\/\*\*$/m);
    expect(typings).toContain('  read: ({ /** Workspace-relative. */ file_path: string; /** First line, 1-based. Default 1. */ offset?: number;');
  });

  it('still states every limit and skip a model needs', async () => {
    const typings = await builtinTypings();
    for (const fact of [
      'at most 2000 a call (page with offset)',
      '/** Default and max 2000. */ limit?: number',
      'Cuts lines at 2000 chars; refuses binary files.',
      'sorted workspace-relative paths; at most 10000. Skips .git, node_modules.',
      'Skips binary files, files over 10 MiB, .git, node_modules',
      'it must occur once unless replace_all',
      'prefer edit',
    ]) {
      expect(typings.split(fact)).toHaveLength(2);
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
