/**
 * Durable runs end to end on a real sandbox (both runtimes, through the vitest projects): a gated
 * call pauses the run, a decision resumes it by replay, and a rollback reverts it.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileJournalStore } from '../../src/code-mode/file-journal-store.ts';
import { createCodeModeCore, type CodeMode, type CodeModeCoreOptions, type CodeModeToolResult } from '../../src/code-mode/code-mode.ts';
import { createMemoryJournalStore } from '../../src/code-mode/memory-journal-store.ts';
import { defineTool } from '../../src/define-tool.ts';
import { createMemoryEventSink, type MemoryEventSink } from '../../src/event-sinks/memory-sink.ts';
import { createToolRegistry } from '../../src/registry.ts';
import type { SandboxRunRequest, SandboxRuntime } from '../../src/sandbox-runtime.ts';
import type { ToolRegistry } from '../../src/tool.ts';
import { sharedRuntime } from './harness.ts';

interface World {
  registry: ToolRegistry;
  sink: MemoryEventSink;
  codeMode: CodeMode;
  /** Each tool execution, in order: `name(args JSON)`. */
  executed: string[];
  /** What the runtime was asked to record per run. */
  recorded: (SandboxRunRequest['recordReads'] | undefined)[];
  clock: { now: number };
  run(code: string, callId?: string): Promise<CodeModeToolResult>;
}

const open: CodeMode[] = [];
afterEach(async () => {
  for (const codeMode of open.splice(0)) await codeMode.close();
});

const json = { type: 'json' } as const;

type WorldOptions = Partial<Omit<CodeModeCoreOptions, 'registry' | 'runtime'>> & { payNeedsApproval?: boolean };

function world(options: WorldOptions = {}): World {
  const sink = createMemoryEventSink();
  const registry = createToolRegistry({ eventSink: sink });
  const executed: string[] = [];
  const recorded: World['recorded'] = [];
  const clock = { now: Date.parse('2026-12-05T09:00:00Z') };
  const note = (name: string, args: unknown): void => void executed.push(`${name}(${JSON.stringify(args)})`);
  registry.register(
    defineTool({
      name: 'read',
      description: 'reads',
      parameters: { n: { type: 'integer', required: true } },
      output: { schema: json, render: () => [] },
      execute: async (args) => (note('read', args), { n: args.n, text: `row ${args.n}` }),
    }),
  );
  let counter = 0;
  registry.register(
    defineTool({
      name: 'counter',
      description: 'counts (re-run on replay)',
      parameters: {},
      output: { schema: json, render: () => [] },
      replay: 'reexecute',
      execute: async (args) => (note('counter', args), ++counter),
    }),
  );
  registry.register(
    defineTool({
      name: 'pay',
      description: 'pays',
      parameters: { amount: { type: 'number', required: true }, memo: { type: 'json' } },
      output: { schema: json, render: () => [] },
      needsApproval: options.payNeedsApproval ?? true,
      execute: async (args) => (note('pay', args), { paid: args.amount }),
      revert: async (args) => void note('refund', args),
    }),
  );
  registry.register(
    defineTool({
      name: 'mail',
      description: 'mails (its revert fails)',
      parameters: { to: { type: 'string', required: true } },
      output: { schema: json, render: () => [] },
      execute: async (args) => (note('mail', args), 'sent'),
      revert: async () => {
        throw new Error('mail cannot be unsent');
      },
    }),
  );
  registry.register(
    defineTool({
      name: 'tick',
      description: 'moves the host clock past the run deadline',
      parameters: {},
      output: { schema: json, render: () => [] },
      execute: async () => ((clock.now += 10 * 60_000), null),
    }),
  );
  const base = sharedRuntime();
  const runtime: SandboxRuntime = {
    kind: base.kind,
    run: (request) => (recorded.push(request.recordReads), base.run(request)),
    ready: () => base.ready(),
    status: () => base.status(),
    close: async () => undefined,
  };
  const { payNeedsApproval: _pay, ...rest } = options;
  const codeMode = createCodeModeCore({ registry, runtime, now: () => clock.now, typings: stubTypings, ...rest });
  open.push(codeMode);
  let n = 0;
  return {
    registry,
    sink,
    codeMode,
    executed,
    recorded,
    clock,
    async run(code, callId = `run-${++n}`) {
      const tool = await codeMode.asTool();
      return tool.execute({ code, description: 'test program' }, { callId, sessionId: 's1' });
    },
  };
}

// asTool() asks for a prompt; these tests read none, so a stand-in answers.
const stubTypings: NonNullable<CodeModeCoreOptions['typings']> = {
  typings: async () => '',
  prompt: async () => 'prompt',
  check: async () => [],
};

function dispatchEvents(sink: MemoryEventSink, type: string): string[] {
  return sink
    .events('s1')
    .filter((event) => event.type === type)
    .map((event) => ('callId' in event ? event.callId : ''));
}

describe('pause and resume', () => {
  it('pauses a Promise.all at its gated call: earlier calls settle, later ones never start; approval resumes by replay', async () => {
    const w = world();
    const code = `
      const [a, paid, b] = await Promise.all([tools.read({ n: 1 }), tools.pay({ amount: 5 }), tools.read({ n: 2 })]);
      return { a: a.text, paid, b: b.text };`;
    const paused = await w.run(code, 'r1');
    expect(paused.status).toBe('paused');
    expect(paused.isError).toBe(false);
    expect(paused.paused).toEqual({ callId: 'r1', pending: [{ seq: 2, toolName: 'pay', args: { amount: 5 } }], expiresAt: '2026-12-06T09:00:00.000Z' });
    expect(paused.content[0]).toMatchObject({ text: expect.stringContaining('the run is paused: call #2 (tools.pay) waits for a person') });
    expect(w.executed).toEqual(['read({"n":1})']);
    expect(dispatchEvents(w.sink, 'tool/ptc-dispatch')).toEqual(['r1:ptc:1']);
    expect(await w.codeMode.pending()).toEqual([
      { callId: 'r1', sessionId: 's1', description: 'test program', pending: [{ seq: 2, toolName: 'pay', args: { amount: 5 } }], pausedAt: w.clock.now, expiresAt: w.clock.now + 86_400_000 },
    ]);
    expect(w.recorded[0]).toEqual({ replay: [] });

    const resumed = await w.codeMode.decide('r1', { decision: 'approve', by: 'ana', reason: 'ok' });
    expect(resumed.status).toBe('done');
    expect(resumed.value?.result).toEqual({ a: 'row 1', paid: { paid: 5 }, b: 'row 2' });
    // The journaled read ran once; the approved call and the one after it ran for real.
    expect(w.executed).toEqual(['read({"n":1})', 'pay({"amount":5})', 'read({"n":2})']);
    expect(dispatchEvents(w.sink, 'tool/ptc-dispatch')).toEqual(['r1:ptc:1', 'r1:ptc:2', 'r1:ptc:3']);
    const story = w.sink.events('s1').filter((event) => event.type.startsWith('run/'));
    expect(story).toMatchObject([
      { type: 'run/paused', callId: 'r1', pending: [{ seq: 2, toolName: 'pay' }] },
      { type: 'run/resumed', callId: 'r1', decision: 'approve', by: 'ana', reason: 'ok' },
    ]);
    expect(await w.codeMode.pending()).toEqual([]);
  });

  it('replays Date.now(), new Date() and Math.random() read before the gated call: a minute later the arguments are identical', async () => {
    const w = world();
    const code = `
      const t = Date.now();
      const d = new Date().toISOString();
      const r = Math.random();
      await tools.read({ n: 1 });
      const paid = await tools.pay({ amount: r, memo: { t, d } });
      return { t, d, r, late: Date.now() };`;
    const paused = await w.run(code, 'r1');
    const args = paused.paused!.pending[0]!.args as { amount: number; memo: { t: number; d: string } };
    w.clock.now += 60_000;
    const resumed = await w.codeMode.decide('r1', { decision: 'approve' });
    expect(resumed.status).toBe('done');
    const result = resumed.value!.result as { t: number; d: string; r: number; late: number };
    expect({ amount: result.r, memo: { t: result.t, d: result.d } }).toEqual(args);
    expect(w.executed.at(-1)).toBe(`pay(${JSON.stringify(args)})`);
    expect(w.recorded[1]!.replay).toHaveLength(3);
  });

  it('fails the resumed run with replay-divergence when a call differs from the journal, and runs nothing further', async () => {
    const w = world();
    const code = `
      const n = await tools.counter({});
      await tools.pay({ amount: n });
      await tools.read({ n });`;
    await w.run(code, 'r1');
    const resumed = await w.codeMode.decide('r1', { decision: 'approve' });
    expect(resumed.status).toBe('done');
    expect(resumed.isError).toBe(true);
    expect(resumed.error?.info).toMatchObject({ code: 'CODE_RUN_FAILED', kind: 'replay-divergence' });
    expect(resumed.error?.message).toContain('call #2');
    expect(resumed.error?.message).toContain('tools.pay({"amount":1})');
    expect(resumed.error?.message).toContain('tools.pay({"amount":2})');
    // counter re-ran (replay: 'reexecute'); pay and read never ran.
    expect(w.executed).toEqual(['counter({})', 'counter({})']);
  });

  it('throws APPROVAL_DENIED with the reason inside the program, which may catch it and go on', async () => {
    const w = world();
    const code = `
      try {
        await tools.pay({ amount: 100 });
        return 'paid';
      } catch (error) {
        return { code: error.code, message: error.message, next: (await tools.read({ n: 7 })).text };
      }`;
    await w.run(code, 'r1');
    const resumed = await w.codeMode.decide('r1', { decision: 'deny', reason: 'too much', by: 'bo' });
    expect(resumed.value?.result).toEqual({ code: 'APPROVAL_DENIED', message: expect.stringContaining('not approved by bo: too much'), next: 'row 7' });
    expect(w.executed).toEqual(['read({"n":7})']);
  });

  it('denies the call with reason expired once the run has waited past approvalTtlMs', async () => {
    const w = world({ approvalTtlMs: 60_000 });
    await w.run(`try { await tools.pay({ amount: 1 }); } catch (e) { return e.message; }`, 'r1');
    w.clock.now += 60_001;
    expect(await w.codeMode.pending()).toEqual([]);
    const resumed = await w.codeMode.decide('r1', { decision: 'approve' });
    expect(resumed.value?.result).toContain(': expired');
    expect(w.executed).toEqual([]);
  });

  it('denies a gated call with reason timeout when its run is already past its deadline', async () => {
    const w = world();
    const result = await w.run(`await tools.tick({}); try { await tools.pay({ amount: 1 }); } catch (e) { return e.code + ' ' + e.message; }`);
    expect(result.status).toBe('done');
    expect(result.value?.result).toMatch(/^APPROVAL_DENIED .*: timeout/);
    expect(await w.codeMode.pending()).toEqual([]);
  });

  it('lets exactly one of two concurrent decisions resume the run', async () => {
    const w = world();
    await w.run(`return await tools.pay({ amount: 3 });`, 'r1');
    const both = await Promise.allSettled([w.codeMode.decide('r1', { decision: 'approve' }), w.codeMode.decide('r1', { decision: 'approve' })]);
    const fulfilled = both.filter((outcome) => outcome.status === 'fulfilled');
    const rejected = both.filter((outcome) => outcome.status === 'rejected') as PromiseRejectedResult[];
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toMatchObject({ code: 'RUN_NOT_PAUSED' });
    expect(w.executed).toEqual(['pay({"amount":3})']);
    await expect(w.codeMode.decide('nope', { decision: 'approve' })).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    await expect(w.codeMode.decide('r1', { decision: 'maybe' } as never)).rejects.toMatchObject({ code: 'INVALID_ARGS' });
  });

  it('leaves the run paused, undecided, when the decision is cancelled before the program starts again', async () => {
    const w = world();
    await w.run(`return await tools.pay({ amount: 4 });`, 'r1');
    const cancelled = new AbortController();
    cancelled.abort();
    const outcome = await w.codeMode.decide('r1', { decision: 'approve' }, { signal: cancelled.signal });
    expect(outcome.error?.info?.code).toBe('ABORTED_BEFORE_DISPATCH');
    expect((await w.codeMode.pending()).map((run) => run.callId)).toEqual(['r1']);
    expect((await w.codeMode.decide('r1', { decision: 'approve' })).value?.result).toEqual({ paid: 4 });
  });

  it('calls claimed() once the decision holds the run; a rejection puts it back paused, and a loser never calls it', async () => {
    const w = world();
    await w.run(`return await tools.pay({ amount: 5 });`, 'r1');
    await expect(w.codeMode.decide('r1', { decision: 'approve' }, { claimed: async () => Promise.reject(new Error('ledger down')) })).rejects.toThrow('ledger down');
    expect(w.executed).toEqual([]);
    expect((await w.codeMode.pending()).map((run) => run.callId)).toEqual(['r1']);
    const claims: string[] = [];
    const decisions = ['a', 'b'].map((who) => w.codeMode.decide('r1', { decision: 'approve' }, { claimed: async () => void claims.push(who) }));
    const outcomes = await Promise.allSettled(decisions);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(claims).toHaveLength(1);
    expect(w.executed).toEqual(['pay({"amount":5})']);
  });

  it('rolls back applied calls newest first, reports a throwing revert and goes on', async () => {
    const w = world();
    await w.run(`await tools.mail({ to: 'x' }); await tools.pay({ amount: 9 }); await tools.read({ n: 1 });`, 'r1');
    await w.codeMode.decide('r1', { decision: 'approve' });
    const report = await w.codeMode.rollback('r1');
    expect(report).toEqual({
      callId: 'r1',
      reverted: [{ seq: 2, toolName: 'pay' }],
      notReverted: [
        { seq: 3, toolName: 'read', reason: 'the tool has no revert' },
        { seq: 1, toolName: 'mail', reason: 'its revert failed: mail cannot be unsent' },
      ],
    });
    expect(w.executed.at(-1)).toBe('refund({"amount":9})');
    expect(w.sink.events('s1').at(-1)).toMatchObject({ type: 'run/reverted', callId: 'r1' });
    await expect(w.codeMode.rollback('r1')).rejects.toMatchObject({ code: 'RUN_NOT_PAUSED' });
  });

  it('fails the pause when a value the journal must keep is over maxJournalValueBytes', async () => {
    const w = world({ limits: { maxJournalValueBytes: 10 } });
    const result = await w.run(`await tools.read({ n: 1 }); await tools.pay({ amount: 1 });`);
    expect(result.isError).toBe(true);
    expect(result.error?.info).toMatchObject({ code: 'CODE_RUN_FAILED', kind: 'output-limit' });
    expect(result.error?.message).toContain('over the 10-byte limit a paused run may keep per value');
  });

  it('keeps no journal for a run whose tools need no approval, and gates tools by approval rules', async () => {
    const w = world({ payNeedsApproval: false });
    const done = await w.run(`return (await tools.pay({ amount: 1 })).paid;`);
    expect(done.value?.result).toBe(1);
    expect(w.recorded).toEqual([undefined]);

    const ruled = world({ payNeedsApproval: false, approvals: [{ tools: 're*', when: 'always' }], journal: createMemoryJournalStore() });
    const paused = await ruled.run(`return await tools.read({ n: 1 });`);
    expect(paused.paused?.pending).toEqual([{ seq: 1, toolName: 'read', args: { n: 1 } }]);
  });
});

describe('a journal in a data folder', () => {
  let dir: string;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('survives a restart between pause and decision: a new code mode on the same folder resumes the run', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptc-journal-'));
    const first = world({ journal: createFileJournalStore({ dir }) });
    await first.run(`const a = await tools.read({ n: 1 }); const p = await tools.pay({ amount: Math.random() }); return { a: a.text, p };`, 'r1');
    const pendingArgs = (await first.codeMode.pending())[0]!.pending[0]!.args;
    await first.codeMode.close();

    const second = world({ journal: createFileJournalStore({ dir }) });
    expect((await second.codeMode.pending()).map((run) => run.callId)).toEqual(['r1']);
    const resumed = await second.codeMode.decide('r1', { decision: 'approve' });
    expect(resumed.value?.result).toEqual({ a: 'row 1', p: { paid: (pendingArgs as { amount: number }).amount } });
    // The new process never ran the journaled read; it ran the approved call with the journaled arguments.
    expect(second.executed).toEqual([`pay(${JSON.stringify(pendingArgs)})`]);
    await expect(second.codeMode.decide('r1', { decision: 'approve' })).rejects.toMatchObject({ code: 'RUN_NOT_PAUSED' });
  });

  const HOUR = 60 * 60 * 1000;
  const recordsIn = async (folder: string): Promise<string[]> =>
    (await readdir(folder))
      .filter((name) => name.endsWith('.json'))
      .map((name) => decodeURIComponent(name.slice(0, -'.json'.length)))
      .sort();

  it('removes a record journalRetentionMs after its run expired or ended, keeping it until then; files are 0600 in a 0700 folder', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptc-journal-'));
    const journals = join(dir, 'journals');
    const w = world({ journal: createFileJournalStore({ dir: journals }), approvalTtlMs: 60_000, journalRetentionMs: HOUR });
    const start = w.clock.now;
    await w.run(`await tools.pay({ amount: 1 });`, 'expiring');
    await w.run(`await tools.pay({ amount: 2 });`, 'finished');
    await w.codeMode.decide('finished', { decision: 'approve' });
    await w.run(`await tools.pay({ amount: 3 });`, 'rolled-back');
    await w.codeMode.decide('rolled-back', { decision: 'approve' });
    await w.codeMode.rollback('rolled-back');
    expect(await recordsIn(journals)).toEqual(['expiring', 'finished', 'rolled-back']);
    expect((await stat(journals)).mode & 0o777).toBe(0o700);
    for (const name of await readdir(journals)) expect((await stat(join(journals, name))).mode & 0o777).toBe(0o600);

    // Ended an hour ago: gone. Expired less than an hour ago: kept, and still decided as denied.
    w.clock.now = start + HOUR + 1;
    expect(await w.codeMode.pending()).toEqual([]);
    expect(await recordsIn(journals)).toEqual(['expiring']);
    await expect(w.codeMode.rollback('finished')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect(await w.codeMode.durableStatus('expiring')).toMatchObject({ status: 'paused' });

    w.clock.now = start + 60_000 + 2 * HOUR;
    await w.run(`await tools.pay({ amount: 4 });`, 'fresh');
    expect(await recordsIn(journals)).toEqual(['fresh']);
    expect((await w.codeMode.pending()).map((run) => run.callId)).toEqual(['fresh']);
  });

  it('removes records over for journalRetentionMs from the in-memory store too', async () => {
    const w = world({ approvalTtlMs: 60_000, journalRetentionMs: HOUR });
    await w.run(`await tools.pay({ amount: 1 });`, 'r1');
    await w.codeMode.decide('r1', { decision: 'deny' });
    expect(await w.codeMode.durableStatus('r1')).toMatchObject({ status: 'finished' });
    w.clock.now += HOUR + 1;
    await w.codeMode.pending();
    expect(await w.codeMode.durableStatus('r1')).toBeUndefined();
  });

  it('lists paused runs from its index: a finished record is not read again, a new store reads the folder once', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptc-journal-'));
    const w = world({ journal: createFileJournalStore({ dir }) });
    await w.run(`await tools.pay({ amount: 1 });`, 'r1');
    await w.codeMode.decide('r1', { decision: 'approve' });
    // Behind the store's back the finished record now says paused: this store's index still knows better.
    const file = join(dir, 'r1.json');
    await writeFile(file, JSON.stringify({ ...JSON.parse(await readFile(file, 'utf8')), status: 'paused' }));
    expect(await w.codeMode.pending()).toEqual([]);
    const restarted = world({ journal: createFileJournalStore({ dir }) });
    expect((await restarted.codeMode.pending()).map((run) => run.callId)).toEqual(['r1']);
  });

  it('fails the decision of a truncated journal clearly, and runs nothing', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ptc-journal-'));
    const w = world({ journal: createFileJournalStore({ dir }) });
    await w.run(`await tools.read({ n: 1 }); await tools.pay({ amount: 1 });`, 'r1');
    const [file] = (await readdir(dir)).filter((name) => name.endsWith('.json'));
    const text = await readFile(join(dir, file!), 'utf8');
    await writeFile(join(dir, file!), text.slice(0, text.length / 2));
    expect(await w.codeMode.pending()).toEqual([]);
    await expect(w.codeMode.decide('r1', { decision: 'approve' })).rejects.toMatchObject({ code: 'JOURNAL_CORRUPT', message: expect.stringContaining('nothing was run') });
    expect(w.executed).toEqual(['read({"n":1})']);
  });
});
