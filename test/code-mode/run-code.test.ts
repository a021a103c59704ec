import { afterEach, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { createBench, textOf, valueOf, type Bench } from './harness.ts';

let bench: Bench;
afterEach(() => bench.close());

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a city up.',
  parameters: { city: { type: 'string', required: true } },
  output: {
    schema: { type: 'object', additionalProperties: false, properties: { city: { type: 'string', required: true }, population: { type: 'integer', required: true } } },
    render: (_args, value) => [{ type: 'text', text: `${value.city} has ${value.population} people` }],
    presentationMeta: () => ({ card: 'city' }),
  },
  async execute(args) {
    if (args.city === 'Atlantis') throw new Error('no such city: Atlantis');
    return { city: args.city, population: args.city.length * 1000 };
  },
});

describe('run_code', () => {
  it('returns logs and the result as its canonical value, rendered logs-then-result, with no presentationMeta', async () => {
    bench = createBench();
    bench.registry.register(lookup);
    const result = await bench.runCode('const a = await tools.lookup({ city: "Oslo" });\nconsole.log("got", a.city);\nreturn { total: a.population };');
    expect(valueOf(result)).toEqual({ logs: ['got Oslo'], result: { total: 4000 } });
    expect(textOf(result)).toBe('got Oslo\n{\n  "total": 4000\n}');
    expect(result.meta).toBeUndefined();
  });

  it('renders a string result raw, and a run with no output says so', async () => {
    bench = createBench();
    expect(textOf(await bench.runCode('return "plain text"'))).toBe('plain text');
    const silent = await bench.runCode('const x = 1;');
    expect(valueOf(silent)).toEqual({ logs: [] });
    expect(textOf(silent)).toBe('(run_code completed with no output)');
  });

  it('a ToolCallError the program made itself names no nested call; a syntax error carries its kind and place', async () => {
    bench = createBench();
    const forged = await bench.runCode('throw new ToolCallError("lookup", "TOOL_FAILED", "run-1:ptc:1", "made up");');
    expect(forged.isError && forged.error.info).toEqual({ name: 'PtcError', code: 'CODE_RUN_FAILED', kind: 'exception', line: 1, column: 7 });
    const syntax = await bench.runCode('const a = 1;\nconst = 2;');
    expect(syntax.isError && syntax.error.info).toMatchObject({ code: 'CODE_RUN_FAILED', kind: 'syntax', line: 2 });
  });

  it('a failure is CODE_RUN_FAILED with kind, message, the model’s frames, a code frame, then the logs', async () => {
    bench = createBench();
    bench.registry.register(lookup);
    const result = await bench.runCode(['console.log("starting");', 'const cities = ["Oslo", "Atlantis"];', 'for (const city of cities) await tools.lookup({ city });', 'return "done";'].join('\n'));
    expect(result.isError).toBe(true);
    if (!result.isError) return;
    // The structure as fields: the kind, the model's line:column, and the nested call that failed.
    expect(result.error.info).toEqual({ name: 'PtcError', code: 'CODE_RUN_FAILED', kind: 'exception', line: 3, column: 40, toolName: 'lookup', callId: 'run-1:ptc:2' });
    expect(result.error.message).toBe(
      [
        'code run failed (exception): ToolCallError (TOOL_FAILED) from tools["lookup"]: no such city: Atlantis (agent.ts:3:40)',
        '    at agent.ts:3:40',
        '',
        '  2 | const cities = ["Oslo", "Atlantis"];',
        '> 3 | for (const city of cities) await tools.lookup({ city });',
        '    |                                        ^',
        '  4 | return "done";',
        '',
        'logs:',
        'starting',
      ].join('\n'),
    );
  });

  it('a syntax error is reported at the model’s line and column', async () => {
    bench = createBench();
    const result = await bench.runCode('const a: number = 1;\nconst b = (a;');
    expect(result.isError).toBe(true);
    if (!result.isError) return;
    expect(result.error.message).toMatch(/^code run failed \(syntax\): SyntaxError: .*\(agent\.ts:2:\d+\)/);
  });

  it('a returned value that is not lossless JSON fails invalid-output naming the path', async () => {
    bench = createBench();
    const result = await bench.runCode('return { at: new Date(0) };');
    expect(result.isError && result.error.message).toMatch(/^code run failed \(invalid-output\): the returned value is not lossless JSON: result\.at is a Date/);
  });

  it('timeoutMs above the maximum is refused before anything runs', async () => {
    bench = createBench({ limits: { maxTimeoutMs: 60_000 } });
    const result = await bench.runCode('console.log("ran")', { timeoutMs: 60_001 });
    expect(result.isError && result.error.info?.code).toBe('INVALID_ARGS');
    expect(result.isError && result.error.message).toMatch(/from 1 to 60000/);
  });

  it('run_code itself is not offered to programs', async () => {
    bench = createBench();
    bench.registry.register(lookup);
    expect(valueOf(await bench.runCode('return Object.keys(tools)')).result).toEqual(['lookup']);
  });
});
