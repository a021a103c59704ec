import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolDefinition, ToolExec } from '../../src/tool.ts';
import { createBuiltinTools } from '../../src/tools/index.ts';
import { createHarness, type Harness } from './helpers.ts';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
  for (let d = 0; d < 10; d++) for (let f = 0; f < 20; f++) await h.file(`d${d}/f${f}.txt`, `needle ${d} ${f}\n`);
});
afterEach(async () => {
  await h.dispose();
});

/**
 * A signal that reports aborted after `after` checks: deterministic "abort in
 * the middle of a walk". It counts the checks so the test can see the walk
 * stopped right there instead of running to the end.
 */
function abortingAfter(after: number) {
  const controller = new AbortController();
  let checks = 0;
  const signal = controller.signal;
  const original = signal.throwIfAborted.bind(signal);
  Object.defineProperty(signal, 'throwIfAborted', {
    value: () => {
      checks++;
      if (checks === after) controller.abort();
      original();
    },
  });
  return { signal, checks: () => checks };
}

function exec(name: string, signal: AbortSignal): ToolExec<unknown> {
  return { callId: 'c', rootCallId: 'c', sessionId: 's', name, arguments: {}, token: {} as ToolExec['token'], signal };
}

function tool(name: string): ToolDefinition<unknown, unknown> {
  const found = createBuiltinTools({ workspace: h.root }).find((t) => t.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

describe('long walks honour exec.signal', () => {
  it('glob stops at the check where the signal fires', async () => {
    const { signal, checks } = abortingAfter(25);
    await expect(tool('glob').execute({ pattern: '**/*.txt' }, exec('glob', signal))).rejects.toMatchObject({ name: 'AbortError' });
    expect(checks()).toBe(25);
  });

  it('grep stops at the check where the signal fires', async () => {
    const { signal, checks } = abortingAfter(25);
    await expect(tool('grep').execute({ pattern: 'needle' }, exec('grep', signal))).rejects.toMatchObject({ name: 'AbortError' });
    expect(checks()).toBe(25);
  });

  it('without an abort the same walks run to the end', async () => {
    const { signal, checks } = abortingAfter(Number.POSITIVE_INFINITY);
    const value = (await tool('grep').execute({ pattern: 'needle' }, exec('grep', signal))) as { matches: unknown[] };
    expect(value.matches).toHaveLength(200);
    expect(checks()).toBeGreaterThan(200);
  });

  it('through the registry, an already-aborted signal runs nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await h.call('grep', { pattern: 'needle' }, controller.signal);
    expect(result.isError && result.error.info?.code).toBe('ABORTED_BEFORE_DISPATCH');
  });
});
