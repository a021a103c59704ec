/**
 * The synchronous crossing (sandbox/isolate-run.ts, SharedReplies) at the
 * isolate level: a tool whose call misses the host's turn is reported once,
 * every reply larger than the shared memory reports its tool (so a tool that
 * keeps answering big stays slow), a tool named slow at the start never
 * crosses synchronously, and replies are right whichever way they came.
 */
import { describe, expect, it } from 'vitest';
import type { SandboxCallOutcome, SandboxRunRequest } from '../../src/sandbox-runtime.ts';
import { prepareIsolate, runInIsolate, type RunControl } from '../../sandbox/isolate-run.ts';
import { stripProgram } from '../../sandbox/strip-types.ts';
import { resultOf, testLimits } from './harness.ts';
import type { JsonValue } from '../../src/json.ts';

const tools: Record<string, (i: number) => Promise<unknown>> = {
  now: async (i) => i,
  later: (i) => new Promise((resolve) => setTimeout(() => resolve(i), 2)),
  // Answers within the turn, but more than the shared memory (16 KiB) holds.
  rows: async (i) => Array.from({ length: 1_000 }, (_, j) => `row ${i}.${j}`),
};

async function run(code: string, options: RunControl): Promise<unknown> {
  // No wall-clock bound in a test: a loaded machine's long host turn must not end a wait early.
  const control = options;
  control.syncWaitMs ??= 600_000;
  const stripped = await stripProgram(code, 'agent.ts');
  if (!stripped.ok) throw new Error(stripped.failure.message);
  const request: SandboxRunRequest = {
    code,
    toolNames: Object.keys(tools),
    callTool: async (name, argsJson): Promise<SandboxCallOutcome> => ({ ok: true, value: (await tools[name]((JSON.parse(argsJson) as { i: number }).i)) as JsonValue }),
    limits: testLimits,
    signal: new AbortController().signal,
  };
  return resultOf(await runInIsolate(await prepareIsolate(testLimits.memoryMiB), stripped.js, request, control));
}

const PROGRAM = 'let s = 0; for (let i = 0; i < 5; i++) s += (await tools.now({ i })) + (await tools.later({ i })); return s;';

describe('the synchronous crossing', () => {
  it('reports a tool whose call missed the host turn, once, and never one that answered within it', async () => {
    const slow: string[] = [];
    expect(await run(PROGRAM, { syncCalls: true, onSlowTool: (name) => slow.push(name) })).toBe(20);
    // Its later calls in the run crossed asynchronously: reported once.
    expect(slow).toEqual(['later']);
  });

  it('reports a tool at each reply that outgrew the shared memory, and its values arrive whole', async () => {
    const slow: string[] = [];
    const code = 'const rows = []; for (let i = 0; i < 3; i++) rows.push(...(await tools.rows({ i })), await tools.now({ i })); return rows;';
    const rows = (await run(code, { syncCalls: true, onSlowTool: (name) => slow.push(name) })) as unknown[];
    expect(rows).toHaveLength(3_003);
    expect(rows.slice(999, 1_002)).toEqual(['row 0.999', 0, 'row 1.0']);
    expect(rows.at(-1)).toBe(2);
    // The first crossed blocked and came late; the two after it crossed asynchronously, and still renew the judgement.
    expect(slow).toEqual(['rows', 'rows', 'rows']);
  });

  it('renews a tool named slow at the start each time it answers big, though it never crossed blocked', async () => {
    const slow: string[] = [];
    const code = 'let n = 0; for (let i = 0; i < 2; i++) n += (await tools.rows({ i })).length + (await tools.now({ i })); return n;';
    expect(await run(code, { syncCalls: true, slowTools: ['rows'], onSlowTool: (name) => slow.push(name) })).toBe(2_001);
    expect(slow).toEqual(['rows', 'rows']);
  });

  it('a tool named slow at the start crosses asynchronously from its first call', async () => {
    const slow: string[] = [];
    expect(await run(PROGRAM, { syncCalls: true, slowTools: ['later'], onSlowTool: (name) => slow.push(name) })).toBe(20);
    expect(slow).toEqual([]);
  });

  it('a guest that stops waiting at once still gets every reply, the asynchronous way', async () => {
    // syncWaitMs 0: each crossing gives up before the host can answer, so the host's answer finds no waiter.
    const code = `${PROGRAM.replace('return s;', '')} const all = await Promise.all(Array.from({ length: 20 }, (_, i) => tools.now({ i }))); return s + all.length;`;
    for (let i = 0; i < 5; i++) expect(await run(code, { syncCalls: true, syncWaitMs: 0 })).toBe(40);
  });

  it('without the synchronous crossing nothing is reported', async () => {
    const slow: string[] = [];
    const control: RunControl = { onSlowTool: (name) => slow.push(name) };
    expect(await run(PROGRAM, control)).toBe(20);
    expect(slow).toEqual([]);
  });
});
