import { describe, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { createToolRegistry } from '../../src/registry.ts';
import { compileApprovalRules } from '../../src/code-mode/approval-rules.ts';
import { createMemoryJournalStore } from '../../src/code-mode/memory-journal-store.ts';
import type { RunJournal } from '../../src/code-mode/journal-store.ts';

const base = {
  description: 'd',
  parameters: { id: { type: 'string', required: true } },
  output: { schema: { type: 'string' }, render: () => [] },
  execute: async () => 'ok',
} as const;

describe('durable fields of a tool definition', () => {
  it('keeps needsApproval, replay and revert off the schema but for the mayPause flag', async () => {
    const reverted: unknown[] = [];
    const registry = createToolRegistry();
    registry.register(
      defineTool({
        ...base,
        name: 'pay',
        needsApproval: (args) => args.id === 'big',
        replay: 'reexecute',
        revert: (args, value) => void reverted.push([args, value]),
      }),
    );
    registry.register(defineTool({ ...base, name: 'read' }));
    const [pay, read] = registry.schemas();
    expect(pay).toEqual({ name: 'pay', description: 'd', parameters: pay!.parameters, output: pay!.output, mayPause: true });
    expect(read).not.toHaveProperty('mayPause');
    const tool = registry.get('pay')!;
    const call = { callId: 'r:ptc:1', runCallId: 'r', rootCallId: 'r', sessionId: 's', name: 'pay' };
    expect(await tool.needsApproval!({ id: 'big' }, call)).toBe(true);
    expect(await tool.needsApproval!({ id: 'small' }, call)).toBe(false);
    expect(tool.replay).toBe('reexecute');
    await tool.revert!({ id: 'a' }, 'ok', { ...call, signal: new AbortController().signal });
    expect(reverted).toEqual([[{ id: 'a' }, 'ok']]);
    expect(registry.get('read')!.needsApproval).toBeUndefined();
  });

  it('refuses malformed durable fields at registration, naming each', () => {
    expect(() => defineTool({ ...base, name: 'x', needsApproval: 'yes' as unknown as boolean })).toThrow(/needsApproval: must be a boolean or a function/);
    expect(() => defineTool({ ...base, name: 'x', replay: 'again' as 'reexecute' })).toThrow(/replay: must be 'reexecute'/);
    const registry = createToolRegistry();
    expect(() => registry.register({ ...defineTool({ ...base, name: 'x' }), revert: 1 } as never)).toThrow(/revert: must be a function/);
  });

  it('approval rules match tool names by glob, and refuse a bad rule', () => {
    const gated = compileApprovalRules([{ tools: 'github__create_*', when: 'always' }])!;
    expect(gated('github__create_issue')).toBe(true);
    expect(gated('github__list_issues')).toBe(false);
    expect(compileApprovalRules([])).toBeUndefined();
    expect(() => compileApprovalRules([{ tools: '', when: 'never' as 'always' }])).toThrow(/approvals\[0\]\.tools.*approvals\[0\]\.when/);
  });
});

describe('the in-memory journal store', () => {
  const journal = (callId: string, pausedAt: number): RunJournal => ({
    version: 1,
    callId,
    sessionId: 's',
    run: { code: 'return 1', description: 'd' },
    status: 'paused',
    entries: [],
    reads: [],
    pending: [{ seq: 1, toolName: 'pay', args: {} }],
    pausedAt,
    expiresAt: pausedAt + 1000,
  });

  it('lists paused runs by prefix, oldest first, and lets exactly one claim win', async () => {
    const store = createMemoryJournalStore();
    await store.put(journal('t1/b', 2));
    await store.put(journal('t1/a', 1));
    await store.put(journal('t2/c', 0));
    expect((await store.listPaused('t1/')).map((j) => j.callId)).toEqual(['t1/a', 't1/b']);
    const claims = await Promise.all([store.claim('t1/a', 'paused', 'resuming'), store.claim('t1/a', 'paused', 'resuming')]);
    expect(claims.filter((c) => c !== undefined)).toHaveLength(1);
    expect((await store.get('t1/a'))!.status).toBe('resuming');
    expect(await store.claim('nope', 'paused', 'resuming')).toBeUndefined();
  });
});
