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

describe('typings/builtin.d.ts', () => {
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
