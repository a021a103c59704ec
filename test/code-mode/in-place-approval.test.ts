/**
 * Approval in place (`approveInPlace`): a gated call is decided while its run waits, and the run
 * goes on without pausing; an approver with no answer pauses the run as usual.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createCodeModeCore, type CodeMode, type CodeModeCoreOptions } from '../../src/code-mode/code-mode.ts';
import { createInPlaceApprovers, type InPlaceApprovalRequest, type InPlaceApprover } from '../../src/code-mode/in-place-approval.ts';
import { createMemoryJournalStore } from '../../src/code-mode/memory-journal-store.ts';
import { defineTool } from '../../src/define-tool.ts';
import { createToolRegistry } from '../../src/registry.ts';
import { sharedRuntime } from './harness.ts';

const open: CodeMode[] = [];
afterEach(async () => {
  for (const codeMode of open.splice(0)) await codeMode.close();
});

const stubTypings: NonNullable<CodeModeCoreOptions['typings']> = { typings: async () => '', prompt: async () => 'prompt', check: async () => [] };
const json = { type: 'json' } as const;

function world(approveInPlace: InPlaceApprover) {
  const registry = createToolRegistry();
  const executed: string[] = [];
  registry.register(
    defineTool({
      name: 'read',
      description: 'reads',
      parameters: { n: { type: 'integer', required: true } },
      output: { schema: json, render: () => [] },
      execute: async (args) => (executed.push(`read ${args.n}`), args.n),
    }),
  );
  registry.register(
    defineTool({
      name: 'pay',
      description: 'pays',
      parameters: { amount: { type: 'number', required: true } },
      output: { schema: json, render: () => [] },
      needsApproval: true,
      execute: async (args) => (executed.push(`pay ${args.amount}`), { paid: args.amount }),
    }),
  );
  const store = createMemoryJournalStore();
  const codeMode = createCodeModeCore({ registry, runtime: sharedRuntime(), typings: stubTypings, journal: store, approveInPlace });
  open.push(codeMode);
  const run = async (code: string, callId: string) => (await codeMode.asTool()).execute({ code, description: 'in place' }, { callId, sessionId: 's1' });
  return { codeMode, executed, store, run };
}

const PROGRAM = `
  const [a, paid, b] = await Promise.all([tools.read({ n: 1 }), tools.pay({ amount: 5 }), tools.read({ n: 2 })]);
  return { a, paid, b };`;

describe('approval in place', () => {
  it('asks once, with the run, call and arguments, while later calls wait; an approval runs the call and the run ends done', async () => {
    const asked: Omit<InPlaceApprovalRequest, 'signal'>[] = [];
    let executedWhenAsked: string[] = [];
    const w = world(async ({ signal: _signal, ...request }) => {
      asked.push(request);
      executedWhenAsked = [...w.executed];
      return { decision: 'approve', by: 'tester' };
    });
    const result = await w.run(PROGRAM, 'inplace-1');
    expect(result).toMatchObject({ status: 'done', isError: false, value: { result: { a: 1, paid: { paid: 5 }, b: 2 } } });
    expect(asked).toEqual([{ runCallId: 'inplace-1', sessionId: 's1', callId: 'inplace-1:ptc:2', seq: 2, toolName: 'pay', args: { amount: 5 } }]);
    // The call after the gated one had not started when the person was asked.
    expect(executedWhenAsked).toEqual(['read 1']);
    expect(w.executed).toEqual(['read 1', 'pay 5', 'read 2']);
    // No pause: nothing was stored, nothing is pending.
    expect(await w.store.get('inplace-1')).toBeUndefined();
    expect(await w.codeMode.pending()).toEqual([]);
  });

  it('a denial in place throws APPROVAL_DENIED with the reason at that call, which the program may catch', async () => {
    const w = world(async () => ({ decision: 'deny', reason: 'not this month' }));
    const result = await w.run(
      `try { await tools.pay({ amount: 9 }); } catch (e) { return { code: e.code, message: e.message }; }`,
      'inplace-2',
    );
    expect(result.status).toBe('done');
    const value = result.value?.result as { code: string; message: string };
    expect(value.code).toBe('APPROVAL_DENIED');
    expect(value.message).toContain('not this month');
    expect(w.executed).toEqual([]);
  });

  it('an approver with no answer (or one that fails) pauses the run as usual, and a later decision resumes it', async () => {
    const approvers = createInPlaceApprovers();
    const w = world(approvers.approve);
    // A run with no registered approver, and one whose approver throws: both pause.
    approvers.register('inplace-4', async () => {
      throw new Error('the client went away');
    });
    const first = await w.run(PROGRAM, 'inplace-3');
    const second = await w.run(PROGRAM, 'inplace-4');
    for (const result of [first, second]) expect(result).toMatchObject({ status: 'paused', paused: { pending: [{ seq: 2, toolName: 'pay' }] } });
    const resumed = await w.codeMode.decide('inplace-3', { decision: 'approve' });
    expect(resumed).toMatchObject({ status: 'done', value: { result: { a: 1, paid: { paid: 5 }, b: 2 } } });
  });

  it('stops asking when the run is cancelled', async () => {
    let aborted!: () => void;
    const stopped = new Promise<void>((resolve) => (aborted = resolve));
    let asked!: () => void;
    const asking = new Promise<void>((resolve) => (asked = resolve));
    const w = world(
      ({ signal }) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => (aborted(), resolve(undefined)), { once: true });
          asked();
        }),
    );
    const controller = new AbortController();
    const running = (await w.codeMode.asTool()).execute({ code: 'await tools.pay({ amount: 1 }); return 1;', description: 'x' }, { callId: 'inplace-5', signal: controller.signal });
    await asking;
    controller.abort();
    await stopped;
    const result = await running;
    expect(result).toMatchObject({ status: 'done', isError: true });
    expect(w.executed).toEqual([]);
  });
});
