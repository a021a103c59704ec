import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolExecutionResult } from '../../src/tool.ts';
import { createHarness, type Harness } from './helpers.ts';

let h: Harness;
let nested: ToolExecutionResult[];
beforeEach(async () => {
  h = await createHarness();
  nested = [];
  // A raw tool that dispatches its `calls` as nested calls (parent = its own token), like run_code does.
  h.registry.register({
    name: 'outer',
    description: 'dispatches nested calls',
    parameters: { type: 'object' },
    output: { schema: {}, render: () => [{ type: 'text', text: 'done' }] },
    async execute(args: { calls: { name: string; arguments: unknown }[] }, exec) {
      for (const call of args.calls) {
        nested.push(await h.registry.dispatch({ ...call, parent: exec.token, rootCallId: exec.rootCallId, signal: exec.signal }));
      }
      return null;
    },
  });
  await h.file('f.txt', 'a\nb\n');
});
afterEach(async () => {
  await h.dispose();
});

describe('write and edit presentation metadata', () => {
  it('outer dispatch: meta holds the applied hunks, and the tool/result event carries them', async () => {
    const write = await h.call('write', { file_path: 'f.txt', content: 'a\nc\n' });
    const edit = await h.call('edit', { file_path: 'f.txt', old_string: 'c', new_string: 'd' });
    const writeHunks = [{ oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines: [' a', '-b', '+c'] }];
    const editHunks = [{ oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines: [' a', '-c', '+d'] }];
    expect(write.meta).toEqual(writeHunks);
    expect(edit.meta).toEqual(editHunks);
    const events = h.sink.events().filter((e) => e.type === 'tool/result');
    expect(events.map((e) => (e.type === 'tool/result' ? [e.name, e.meta] : []))).toEqual([
      ['write', writeHunks],
      ['edit', editHunks],
    ]);
  });

  it('nested dispatch (parent set): same value and content, no meta', async () => {
    const result = await h.call('outer', {
      calls: [
        { name: 'write', arguments: { file_path: 'f.txt', content: 'a\nc\n' } },
        { name: 'edit', arguments: { file_path: 'f.txt', old_string: 'c', new_string: 'd' } },
      ],
    });
    expect(result.isError).toBe(false);
    expect(nested).toHaveLength(2);
    expect(nested[0]).toMatchObject({ isError: false, value: { path: 'f.txt', operation: 'update', before: 'a\nb\n', after: 'a\nc\n' } });
    expect(nested[1]).toMatchObject({ isError: false, value: { path: 'f.txt', before: 'a\nc\n', after: 'a\nd\n' } });
    for (const r of nested) expect('meta' in r).toBe(false);
  });

  it('read, glob and grep declare no meta', async () => {
    for (const [name, args] of [
      ['read', { file_path: 'f.txt' }],
      ['glob', { pattern: '*' }],
      ['grep', { pattern: 'a' }],
    ] as const) {
      const result = await h.call(name, args);
      expect(result.isError).toBe(false);
      expect('meta' in result).toBe(false);
    }
  });
});
