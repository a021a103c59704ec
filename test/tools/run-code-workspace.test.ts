import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodeModeCore, type CodeMode } from '../../src/code-mode/code-mode.ts';
import type { SandboxRuntime } from '../../src/sandbox-runtime.ts';
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { createHarness, type Harness } from './helpers.ts';

// A model's program: find every TODO, read around the first, fix them all with edit.
let h: Harness;
let runtime: SandboxRuntime;
let codeMode: CodeMode;
beforeAll(async () => {
  h = await createHarness();
  await h.file('src/a.ts', 'export const a = 1; // TODO: rename\nexport const b = 2;\n');
  await h.file('src/b.ts', '// TODO: rename\n// TODO: rename\n');
  runtime = createInProcessRuntime({ warmPoolSize: 1 });
  codeMode = createCodeModeCore({ registry: h.registry, runtime });
});
afterAll(async () => {
  await codeMode.close();
  await runtime.close();
  await h.dispose();
});

describe('run_code over the workspace tools', () => {
  it('greps, reads and edits through canonical values; nested events carry rendered content only', async () => {
    const code = `
      const { matches } = await tools.grep({ pattern: 'TODO', path: 'src' });
      const first = await tools.read({ file_path: matches[0].path, offset: matches[0].lineNumber, limit: 1 });
      const files = [...new Set(matches.map((m) => m.path))];
      const edited = [];
      for (const file of files) {
        const { after } = await tools.edit({ file_path: file, old_string: 'TODO: rename', new_string: 'DONE', replace_all: true });
        edited.push(file + ':' + after.split('DONE').length);
      }
      let refused = '';
      try {
        await tools.edit({ file_path: 'src/b.ts', old_string: 'DONE', new_string: 'x' });
      } catch (error) {
        refused = error.code + ': ' + error.message;
      }
      return { count: matches.length, first: first.lines[0].text, edited, refused };
    `;
    const result = await h.registry.dispatch({ name: 'run_code', arguments: { code, description: 'fix TODOs' }, sessionId: 'rc' });
    if (result.isError) throw new Error(result.error.message);
    expect(result.value).toEqual({
      logs: [],
      result: {
        count: 3,
        first: 'export const a = 1; // TODO: rename',
        edited: ['src/a.ts:2', 'src/b.ts:3'],
        refused:
          'TOOL_FAILED: old_string occurs 2 times in "src/b.ts": include more surrounding lines to make it unique, or pass replace_all: true to replace all 2',
      },
    });
    expect(await readFile(path.join(h.root, 'src/b.ts'), 'utf8')).toBe('// DONE\n// DONE\n');

    const nested = h.sink.events('rc').filter((event) => event.type === 'tool/ptc-dispatch');
    expect(nested.map((event) => [event.name, event.isError])).toEqual([
      ['grep', false],
      ['read', false],
      ['edit', false],
      ['edit', false],
      ['edit', true],
    ]);
    expect(nested[0]).toMatchObject({
      content: [{ type: 'text', text: 'src/a.ts:1:export const a = 1; // TODO: rename\nsrc/b.ts:1:// TODO: rename\nsrc/b.ts:2:// TODO: rename' }],
    });
    expect(nested[2]).toMatchObject({ content: [{ type: 'text', text: 'Edited src/a.ts' }] });
    for (const event of nested) expect('meta' in event || 'value' in event).toBe(false);
  });
});
