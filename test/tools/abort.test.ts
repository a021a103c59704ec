import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolDefinition, ToolExec } from '../../src/tool.ts';
import { createBuiltinTools } from '../../src/tools/index.ts';
import { createHarness, type Harness } from './helpers.ts';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
  for (let d = 0; d < 10; d++) for (let f = 0; f < 20; f++) await h.file(`d${d}/f${f}.txt`, `needle ${d} ${f}\n`);
  // A line that sends ^(a+)+\1$ (a backreference: V8, not RE2) into exponential backtracking: the search never ends on its own.
  await h.file('stuck/line.txt', `${'a'.repeat(34)}!\n`);
});
afterEach(async () => {
  await h.dispose();
});

function exec(name: string, signal: AbortSignal): ToolExec<unknown> {
  return { callId: 'c', rootCallId: 'c', sessionId: 's', name, arguments: {}, token: {} as ToolExec['token'], signal };
}

function tool(name: string, tools = createBuiltinTools({ workspace: h.root })): ToolDefinition<unknown, unknown> {
  const found = tools.find((t) => t.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

describe('searches honour exec.signal', () => {
  it('a grep stuck backtracking in its worker stops when the signal fires, and the next grep runs', async () => {
    const tools = createBuiltinTools({ workspace: h.root });
    const controller = new AbortController();
    const stuck = tool('grep', tools).execute({ pattern: '^(a+)+\\1$', path: 'stuck' }, exec('grep', controller.signal));
    // The host loop still turns while the worker backtracks: this timer fires before the grep settles.
    const order: string[] = [];
    void stuck.catch(() => order.push('grep settled'));
    await new Promise((resolve) => setTimeout(resolve, 0));
    order.push('loop turned');
    controller.abort();
    await expect(stuck).rejects.toMatchObject({ name: 'AbortError' });
    expect(order).toEqual(['loop turned', 'grep settled']);
    const value = (await tool('grep', tools).execute({ pattern: 'needle 3 7$' }, exec('grep', new AbortController().signal))) as {
      matches: unknown[];
    };
    expect(value.matches).toEqual([{ path: 'd3/f7.txt', lineNumber: 1, line: 'needle 3 7' }]);
  });

  it('a glob stuck matching stops when the signal fires', async () => {
    await h.file(`names/${'a'.repeat(100)}`, '');
    const controller = new AbortController();
    const stuck = tool('glob').execute({ pattern: `names/${'*a'.repeat(6)}*b` }, exec('glob', controller.signal));
    await new Promise((resolve) => setTimeout(resolve, 0));
    controller.abort();
    await expect(stuck).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('without an abort the same walks run to the end', async () => {
    const value = (await tool('grep').execute({ pattern: 'needle' }, exec('grep', new AbortController().signal))) as { matches: unknown[] };
    expect(value.matches).toHaveLength(200);
    const paths = (await tool('glob').execute({ pattern: 'd*/*.txt' }, exec('glob', new AbortController().signal))) as { paths: unknown[] };
    expect(paths.paths).toHaveLength(200);
  });

  it('through the registry, an already-aborted signal runs nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await h.call('grep', { pattern: 'needle' }, controller.signal);
    expect(result.isError && result.error.info?.code).toBe('ABORTED_BEFORE_DISPATCH');
  });

  it('through the registry, a cancel while the worker backtracks reports ABORTED', async () => {
    const controller = new AbortController();
    const pending = h.call('grep', { pattern: '^(a+)+\\1$', path: 'stuck/line.txt' }, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 0));
    controller.abort();
    const result = await pending;
    expect(result.isError && result.error.info?.code).toBe('ABORTED');
  });
});
