import { describe, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { createToolRegistry } from '../../src/registry.ts';
import type { ToolExec, ToolExecutionResult } from '../../src/tool.ts';
import { bodyTool, echoTool, textOf } from './tool-fixtures.ts';

function codeOf(result: ToolExecutionResult): string | undefined {
  return result.isError ? result.error.info?.code : undefined;
}

describe('dispatch', () => {
  it('runs a tool: value validated and frozen, content rendered, result frozen', async () => {
    const registry = createToolRegistry();
    registry.register(echoTool());
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(result).toEqual({ isError: false, value: { text: 'hi' }, content: [{ type: 'text', text: 'hi' }] });
    expect(Object.isFrozen(result)).toBe(true);
    expect(Object.isFrozen(result.value)).toBe(true);
    expect(Object.isFrozen(result.content[0])).toBe(true);
  });

  it('dispatches a defineTool definition, validating nested arguments and the value', async () => {
    const registry = createToolRegistry();
    let runs = 0;
    const tool = defineTool({
      name: 'lines',
      description: 'Numbered lines.',
      parameters: {
        path: { type: 'string', required: true },
        mode: { type: 'string', enum: ['head', 'tail'] },
        range: { type: 'object', properties: { from: { type: 'integer', required: true } }, additionalProperties: false },
      },
      output: {
        schema: {
          type: 'object',
          properties: { lines: { type: 'array', items: { type: 'object', properties: { text: { type: 'string', required: true } }, additionalProperties: false }, required: true } },
          additionalProperties: false,
        },
        render: (args, value) => [{ type: 'text', text: `${args.path}: ${value.lines.map((l) => l.text).join('|')}` }],
      },
      execute: async (args) => (runs++, { lines: [{ text: args.mode ?? 'all' }] }),
    });
    registry.register(tool);
    const ok = await registry.dispatch({ name: 'lines', arguments: { path: 'a.txt', mode: 'head', range: { from: 1 } } });
    expect(ok).toEqual({ isError: false, value: { lines: [{ text: 'head' }] }, content: [{ type: 'text', text: 'a.txt: head' }] });
    const bad = await registry.dispatch({ name: 'lines', arguments: { mode: 'middle', range: { from: 'x' } } });
    expect(codeOf(bad)).toBe('INVALID_ARGS');
    expect(textOf(bad)).toMatch(/path/);
    expect(textOf(bad)).toMatch(/arguments\.mode/);
    expect(textOf(bad)).toMatch(/arguments\.range\.from/);
    expect(runs).toBe(1);
  });

  it('answers an unknown tool with UNKNOWN_TOOL', async () => {
    const result = await createToolRegistry().dispatch({ name: 'nope', arguments: {} });
    expect(codeOf(result)).toBe('UNKNOWN_TOOL');
    expect(textOf(result)).toMatch(/no tool named "nope"/);
  });

  it('refuses invalid arguments with INVALID_ARGS naming every path, without running the body', async () => {
    const registry = createToolRegistry();
    let ran = false;
    registry.register(echoTool({ execute: async () => ((ran = true), { text: '' }) }));
    const result = await registry.dispatch({ name: 'echo', arguments: { n: 1.5, extra: true } });
    expect(codeOf(result)).toBe('INVALID_ARGS');
    const message = result.isError ? result.error.message : '';
    expect(message).toMatch(/arguments/);
    expect(message).toMatch(/text/);
    expect(message).toMatch(/arguments\.n/);
    expect(message).toMatch(/extra/);
    expect(ran).toBe(false);
  });

  it('refuses lossy arguments and non-object arguments with INVALID_ARGS', async () => {
    const registry = createToolRegistry();
    registry.register(bodyTool('any', async () => null));
    const lossy = await registry.dispatch({ name: 'any', arguments: { a: [1, undefined] } });
    expect(codeOf(lossy)).toBe('INVALID_ARGS');
    expect(textOf(lossy)).toMatch(/arguments\.a\[1\]/);
    const notObject = await registry.dispatch({ name: 'any', arguments: [1, 2] });
    expect(codeOf(notObject)).toBe('INVALID_ARGS');
  });

  it('gives the body a frozen exec whose arguments are a frozen, detached snapshot', async () => {
    const registry = createToolRegistry();
    let seen: ToolExec | undefined;
    registry.register(bodyTool('look', async (_args, exec) => ((seen = exec), null)));
    const callerArgs = { nested: { list: [1, 2] } };
    await registry.dispatch({ name: 'look', arguments: callerArgs, callId: 'c1', sessionId: 's1' });
    callerArgs.nested.list.push(3);
    expect(seen).toBeDefined();
    const exec = seen!;
    expect(Object.isFrozen(exec)).toBe(true);
    expect(Object.isFrozen(exec.arguments)).toBe(true);
    expect(Object.isFrozen((exec.arguments as { nested: { list: number[] } }).nested.list)).toBe(true);
    expect(exec.arguments).not.toBe(callerArgs);
    expect(exec.arguments).toEqual({ nested: { list: [1, 2] } });
    expect(exec).toMatchObject({ callId: 'c1', rootCallId: 'c1', sessionId: 's1', name: 'look' });
    expect(exec.signal).toBeInstanceOf(AbortSignal);
    expect(exec.signal.aborted).toBe(false);
    expect('parent' in exec).toBe(false);
    expect(() => {
      (exec as { callId: string }).callId = 'x';
    }).toThrow(TypeError);
  });

  it('defaults callId to a fresh UUID, rootCallId to callId, sessionId to "default"; a new token per dispatch', async () => {
    const registry = createToolRegistry();
    const execs: ToolExec[] = [];
    registry.register(bodyTool('look', async (_args, exec) => (execs.push(exec), null)));
    await registry.dispatch({ name: 'look', arguments: {} });
    await registry.dispatch({ name: 'look', arguments: {} });
    const [a, b] = execs;
    expect(a.callId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.rootCallId).toBe(a.callId);
    expect(a.sessionId).toBe('default');
    expect(a.callId).not.toBe(b.callId);
    expect(a.token).not.toBe(b.token);
    expect(Object.isFrozen(a.token)).toBe(true);
  });

  it('turns a lossy value into INVALID_TOOL_OUTPUT naming the path', async () => {
    const registry = createToolRegistry();
    registry.register(bodyTool('lossy', async () => ({ when: new Date(0) })));
    const result = await registry.dispatch({ name: 'lossy', arguments: {} });
    expect(codeOf(result)).toBe('INVALID_TOOL_OUTPUT');
    expect(result.isError && result.error.info?.name).toBe('ToolOutputError');
    expect(textOf(result)).toMatch(/value\.when/);
    expect('value' in result).toBe(false);
  });

  it('turns a schema-violating value into INVALID_TOOL_OUTPUT with the violations', async () => {
    const registry = createToolRegistry();
    registry.register(echoTool({ execute: async () => ({ text: 42 }) }));
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'x' } });
    expect(codeOf(result)).toBe('INVALID_TOOL_OUTPUT');
    expect(textOf(result)).toMatch(/value\.text/);
  });

  it('turns a throwing render or presentationMeta, or invalid content, into INVALID_TOOL_OUTPUT', async () => {
    const registry = createToolRegistry();
    registry.register(echoTool({ name: 'r', output: { schema: { type: 'object', additionalProperties: true }, render: () => { throw new Error('render broke'); } } }));
    registry.register(
      echoTool({
        name: 'm',
        output: { schema: { type: 'object', additionalProperties: true }, render: () => [], presentationMeta: () => { throw new Error('meta broke'); } },
      }),
    );
    registry.register(echoTool({ name: 'c', output: { schema: { type: 'object', additionalProperties: true }, render: () => [{ type: 'txt' }] as never } }));
    const r = await registry.dispatch({ name: 'r', arguments: { text: 'x' } });
    const m = await registry.dispatch({ name: 'm', arguments: { text: 'x' } });
    const c = await registry.dispatch({ name: 'c', arguments: { text: 'x' } });
    for (const result of [r, m, c]) expect(codeOf(result)).toBe('INVALID_TOOL_OUTPUT');
    expect(textOf(r)).toMatch(/render broke/);
    expect(textOf(m)).toMatch(/meta broke/);
    expect(textOf(c)).toMatch(/content\[0\]/);
  });

  it('computes presentationMeta only when parent is unset', async () => {
    const registry = createToolRegistry();
    let metaCalls = 0;
    registry.register(
      echoTool({
        output: {
          schema: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false },
          render: (_a: unknown, v: { text: string }) => [{ type: 'text', text: v.text }],
          presentationMeta: (_a: unknown, v: { text: string }) => (metaCalls++, { card: v.text }),
        },
      }),
    );
    let nested: ToolExecutionResult | undefined;
    registry.register(
      bodyTool('outer', async (_args, exec) => {
        nested = await registry.dispatch({ name: 'echo', arguments: { text: 'inner' }, parent: exec.token });
        return null;
      }),
    );
    const outer = await registry.dispatch({ name: 'echo', arguments: { text: 'top' } });
    expect(outer.meta).toEqual({ card: 'top' });
    expect(metaCalls).toBe(1);
    await registry.dispatch({ name: 'outer', arguments: {} });
    expect(nested?.isError).toBe(false);
    expect(nested && 'meta' in nested).toBe(false);
    expect(metaCalls).toBe(1);
  });

  it('turns a thrown body into TOOL_FAILED with `Error: <message>` content', async () => {
    const registry = createToolRegistry();
    registry.register(bodyTool('boom', async () => { throw new TypeError('disk on fire'); }));
    const result = await registry.dispatch({ name: 'boom', arguments: {} });
    expect(result.isError).toBe(true);
    expect(codeOf(result)).toBe('TOOL_FAILED');
    expect(result.content).toEqual([{ type: 'text', text: 'Error: disk on fire' }]);
    expect(result.isError && result.error).toEqual({ message: 'disk on fire', info: { name: 'TypeError', code: 'TOOL_FAILED' } });
  });

  it('handles a thrown value whose toString throws', async () => {
    const registry = createToolRegistry();
    const hostile = { toString: () => { throw new Error('no string for you'); } };
    registry.register(bodyTool('hostile', async () => { throw hostile; }));
    const result = await registry.dispatch({ name: 'hostile', arguments: {} });
    expect(codeOf(result)).toBe('TOOL_FAILED');
    expect(textOf(result)).toMatch(/^Error: /);
  });

  it('refuses a call an admit hook refuses, as UNKNOWN_TOOL, before the body runs', async () => {
    const registry = createToolRegistry();
    let ran = false;
    registry.register(bodyTool('secret', async () => ((ran = true), null)));
    const seen: { name: string; nested: boolean }[] = [];
    registry.hook('tools/admit', (call) => (seen.push(call), call.nested ? undefined : 'call secret from run_code'));
    const result = await registry.dispatch({ name: 'secret', arguments: {} });
    expect(codeOf(result)).toBe('UNKNOWN_TOOL');
    expect(textOf(result)).toMatch(/run_code/);
    expect(ran).toBe(false);
    expect(seen).toEqual([{ name: 'secret', nested: false }]);
  });

  it('never rejects, even on a malformed request', async () => {
    const registry = createToolRegistry();
    const results = await Promise.all([
      registry.dispatch(null as never),
      registry.dispatch({ name: 42 } as never),
      registry.dispatch({ name: 'x', arguments: {}, signal: 'soon' } as never),
      registry.dispatch({ name: 'x', arguments: {}, parent: {} } as never),
      registry.dispatch({
        name: 'x',
        get arguments(): unknown {
          throw new Error('hostile getter');
        },
      }),
    ]);
    for (const result of results) expect(result.isError).toBe(true);
  });

  it('binds the agent to the call: the context checked, its content as blocks, the origin named by the registry', async () => {
    const registry = createToolRegistry();
    const injected: unknown[] = [];
    registry.register(
      bodyTool('notify', async (_args, exec) => {
        exec.agent?.inject({ content: 'later', source: { kind: 'plugin', plugin: 'test' } });
        // A destructured inject works, and a tool cannot name another call as the origin.
        const { inject } = exec.agent!;
        (inject as (c: unknown, o: unknown) => void)({ content: [{ type: 'text', text: 'two' }], source: { kind: 'plugin', plugin: 'test' } }, { callId: 'forged' });
        expect(() => exec.agent?.inject({ content: 'x' } as never)).toThrow(TypeError);
        return null;
      }),
    );
    const result = await registry.dispatch({
      name: 'notify',
      arguments: {},
      callId: 'c1',
      sessionId: 's1',
      agent: { inject: (context, origin) => injected.push({ context, origin }) },
    });
    expect(result.isError).toBe(false);
    const origin = { sessionId: 's1', rootCallId: 'c1', callId: 'c1', name: 'notify' };
    expect(injected).toEqual([
      { context: { content: [{ type: 'text', text: 'later' }], source: { kind: 'plugin', plugin: 'test' } }, origin },
      { context: { content: [{ type: 'text', text: 'two' }], source: { kind: 'plugin', plugin: 'test' } }, origin },
    ]);
  });

  it('drops an inject made after the call settled, without throwing into the tool', async () => {
    const registry = createToolRegistry();
    const injected: unknown[] = [];
    let later: (() => void) | undefined;
    registry.register(
      bodyTool('notify', async (_args, exec) => {
        later = () => exec.agent!.inject({ content: 'too late', source: { kind: 'plugin', plugin: 'test' } });
        return null;
      }),
    );
    await registry.dispatch({ name: 'notify', arguments: {}, agent: { inject: (context) => injected.push(context) } });
    expect(later).toBeDefined();
    expect(() => later!()).not.toThrow();
    expect(injected).toEqual([]);
  });

  it('refuses an agent without an inject method', async () => {
    const registry = createToolRegistry();
    registry.register(bodyTool('x', async () => null));
    const result = await registry.dispatch({ name: 'x', arguments: {}, agent: {} as never });
    expect(result.isError && result.error.info?.code).toBe('INVALID_ARGS');
  });
});
