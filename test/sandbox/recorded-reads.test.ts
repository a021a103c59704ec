/**
 * Nondeterministic reads: recorded only when the request asks, handed over with each call, and
 * fed back in order on replay before going live.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { SandboxCallOutcome, SandboxRunRequest } from '../../src/sandbox-runtime.ts';
import { createTestRuntime } from '../helpers/runtimes.ts';
import { testLimits } from './harness.ts';
import type { JsonValue } from '../../src/json.ts';

const runtime = createTestRuntime(undefined, { warmPoolMemoryMiB: testLimits.memoryMiB });
afterAll(() => runtime.close());

interface Seen {
  name: string;
  args: unknown;
  reads: number[] | undefined;
}

async function run(code: string, recordReads?: SandboxRunRequest['recordReads']) {
  const seen: Seen[] = [];
  const outcome = await runtime.run({
    code,
    toolNames: ['echo'],
    sessionId: 'reads',
    async callTool(name, argsJson, readsJson): Promise<SandboxCallOutcome> {
      seen.push({ name, args: JSON.parse(argsJson), reads: readsJson === undefined ? undefined : (JSON.parse(readsJson) as number[]) });
      return { ok: true, value: JSON.parse(argsJson) as JsonValue };
    },
    limits: testLimits,
    signal: new AbortController().signal,
    ...(recordReads === undefined ? {} : { recordReads }),
  });
  return { outcome, seen };
}

const PROGRAM = `
  const a = Date.now();
  const r = Math.random();
  await tools.echo({ a, r });
  const d = new Date().getTime();
  const s = Date();
  const [x, y] = await Promise.all([tools.echo({ d }), tools.echo({ s, r2: Math.random() })]);
  return { a, r, d, s, late: Math.random(), old: new Date(0).getTime(), isDate: new Date() instanceof Date };
`;

describe('recorded reads', () => {
  it('hands the host the reads made before each call, and changes nothing without recordReads', async () => {
    const { outcome, seen } = await run(PROGRAM, { replay: [] });
    expect(outcome.ok).toBe(true);
    const result = JSON.parse((outcome as { resultJson: string }).resultJson) as { a: number; r: number; d: number; s: string; old: number; isDate: boolean };
    expect(seen.map((call) => call.reads)).toEqual([[result.a, result.r], [result.d, expect.any(Number)], [expect.any(Number)]]);
    // Date() as a function reads the clock too (its text drops the milliseconds).
    expect(Date.parse(result.s)).toBe(Math.floor(seen[1]!.reads![1]! / 1000) * 1000);
    expect(result.old).toBe(0);
    expect(result.isDate).toBe(true);

    const plain = await run(PROGRAM);
    expect(plain.outcome.ok).toBe(true);
    expect(plain.seen.map((call) => call.reads)).toEqual([undefined, undefined, undefined]);
  });

  it('feeds a replay back in order, then goes live', async () => {
    const first = await run(PROGRAM, { replay: [] });
    const reads = first.seen.flatMap((call) => call.reads ?? []);
    const again = await run(PROGRAM, { replay: reads });
    expect(again.seen.map((call) => call.args)).toEqual(first.seen.map((call) => call.args));
    const before = JSON.parse((first.outcome as { resultJson: string }).resultJson) as { a: number; late: number };
    const after = JSON.parse((again.outcome as { resultJson: string }).resultJson) as { a: number; late: number };
    expect(after.a).toBe(before.a);
    // Past the replayed values, Math.random is live again.
    expect(after.late).not.toBe(before.late);
  });
});
