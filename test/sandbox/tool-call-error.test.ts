import { afterAll, expect, it } from 'vitest';
import { createFakeHost, failureOf, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

const tools = {
  broken: () => {
    throw new Error('disk on fire');
  },
};

it('a failing tool rejects with a catchable ToolCallError carrying name, toolName, code, callId and message', async () => {
  const outcome = await host.run(
    `try { await tools.broken({ a: 1 }); return 'unreachable'; }
     catch (e) {
       if (!(e instanceof ToolCallError) || !(e instanceof Error)) return 'wrong class';
       return { name: e.name, toolName: e.toolName, code: e.code, callId: e.callId, message: e.message };
     }`,
    { tools },
  );
  expect(resultOf(outcome)).toEqual({ name: 'ToolCallError', toolName: 'broken', code: 'TOOL_FAILED', callId: 'run:ptc:1', message: 'disk on fire' });
});

it('an uncaught ToolCallError fails the run with kind exception at the awaiting line, with no host stack', async () => {
  const failure = failureOf(await host.run('const x = 1;\nawait tools.broken({});', { tools }));
  expect(failure.kind).toBe('exception');
  expect(failure.message).toContain('ToolCallError (TOOL_FAILED) from tools["broken"]: disk on fire (agent.ts:2:13)');
  expect(failure.frames).toEqual(['at agent.ts:2:13']);
  expect(JSON.stringify(failure)).not.toMatch(/node_modules|\/work\/|harness/);
});

it('every failed call names the line that made it: alone in its turn, in a fan-out, past the host turn, refused in the isolate; past 16 calls of one turn, a loop’s line', async () => {
  const outcome = await host.run(
    [
      'const at = async (call: () => Promise<unknown>) => { try { await call(); return "no error"; } catch (e) { return /agent\\.ts:(\\d+)/.exec(String((e as Error).stack))?.[1]; } };',
      'const lines: unknown[] = [];',
      'for (let i = 0; i < 3; i++) await tools.fine({});',
      'lines.push(await at(() => tools.broken({})));',
      'lines.push(await at(() => Promise.all([tools.fine({}), tools.broken({})])));',
      'lines.push(await at(() => tools.late({})));',
      'lines.push(await at(() => tools.broken({ n: NaN })));',
      'lines.push(await at(() => Promise.all([',
      '  tools.fine({}),',
      '  tools.fine({}),',
      '  tools.fine({}),',
      '  tools.broken({}),',
      '])));',
      'lines.push(await at(() => Promise.all(Array.from({ length: 40 }, (_, i) => (i === 30 ? tools.broken({}) : tools.fine({}))))));',
      'return lines;',
    ].join('\n'),
    {
      tools: {
        ...tools,
        fine: () => 1,
        late: async () => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          throw new Error('too late');
        },
      },
    },
  );
  expect(resultOf(outcome)).toEqual(['4', '5', '6', '7', '12', '14']);
});

it('ToolCallError is a read-only global the program cannot replace', async () => {
  const outcome = await host.run('try { (globalThis as any).ToolCallError = 1 } catch {}\nreturn typeof ToolCallError');
  expect(resultOf(outcome)).toBe('function');
});

it('a host reply that is not JSON rejects the call instead of hanging the program', async () => {
  const outcome = await host.run('try { await tools.odd({}); } catch (e) { return (e as ToolCallError).code; }', {
    tools: { odd: () => undefined },
    limits: { timeoutMs: 2_000 },
  });
  expect(resultOf(outcome)).toBe('INVALID_TOOL_OUTPUT');
});
