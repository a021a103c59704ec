import { describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../src/registry.ts';
import type { PostExecuteDecision, ToolExecutionResult } from '../../src/tool.ts';
import { bodyTool, echoTool, textOf } from './tool-fixtures.ts';

function codeOf(result: ToolExecutionResult): string | undefined {
  return result.isError ? result.error.info?.code : undefined;
}

/** `echo` with a card: meta `{ length }` of the text. */
function registryWithCard() {
  const registry = createToolRegistry();
  registry.register(
    echoTool({
      output: {
        schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
        render: (_a: unknown, v: { text: string }) => [{ type: 'text', text: `said ${v.text}` }],
        presentationMeta: (_a: unknown, v: { text: string }) => ({ length: v.text.length }),
      },
    }),
  );
  return registry;
}

describe('post-execute', () => {
  it('replaces content only: value and meta are kept', async () => {
    const registry = registryWithCard();
    registry.hook('tools/post-execute', () => ({ kind: 'accept', content: [{ type: 'text', text: 'redacted' }] }));
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'secret' } });
    expect(result).toEqual({ isError: false, value: { text: 'secret' }, content: [{ type: 'text', text: 'redacted' }], meta: { length: 6 } });
  });

  it('replaces the value: re-validated, content and meta recomputed', async () => {
    const registry = registryWithCard();
    registry.hook('tools/post-execute', () => ({ kind: 'accept', value: { text: 'hello world' } }));
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(result).toEqual({ isError: false, value: { text: 'hello world' }, content: [{ type: 'text', text: 'said hello world' }], meta: { length: 11 } });
    expect(Object.isFrozen(result.value)).toBe(true);
  });

  it('refuses an invalid replacement value with INVALID_TOOL_OUTPUT', async () => {
    const registry = registryWithCard();
    registry.hook('tools/post-execute', () => ({ kind: 'accept', value: { text: 7 } }));
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(codeOf(result)).toBe('INVALID_TOOL_OUTPUT');
    expect(textOf(result)).toMatch(/value\.text/);
    expect('value' in result).toBe(false);
  });

  it('refuses replacing content and value at once', async () => {
    const registry = registryWithCard();
    const both = { kind: 'accept', content: [{ type: 'text', text: 'x' }], value: { text: 'y' } } as unknown as PostExecuteDecision;
    registry.hook('tools/post-execute', () => both);
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(codeOf(result)).toBe('INVALID_TOOL_OUTPUT');
    expect(textOf(result)).toMatch(/both content and value/);
  });

  it('blocks: the result becomes a BLOCKED failure with no value and no meta', async () => {
    const registry = registryWithCard();
    registry.hook('tools/post-execute', () => ({ kind: 'block', feedback: 'not allowed to echo that' }));
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(codeOf(result)).toBe('BLOCKED');
    expect(textOf(result)).toMatch(/not allowed to echo that/);
    expect('value' in result).toBe(false);
    expect('meta' in result).toBe(false);
  });

  it('refuses a value replacement on a failed result', async () => {
    const registry = createToolRegistry();
    registry.register(bodyTool('boom', async () => { throw new Error('failed'); }));
    registry.hook('tools/post-execute', () => ({ kind: 'accept', value: { ok: true } }));
    const result = await registry.dispatch({ name: 'boom', arguments: {} });
    expect(result.isError).toBe(true);
    expect('value' in result).toBe(false);
    expect(textOf(result)).toMatch(/failed result/);
  });

  it('runs hooks in registration order, each seeing the previous decision', async () => {
    const registry = registryWithCard();
    const seen: string[] = [];
    registry.hook('tools/post-execute', (_exec, result) => {
      seen.push(textOf(result));
      return { kind: 'accept', content: [{ type: 'text', text: 'first' }] };
    });
    registry.hook('tools/post-execute', (_exec, result) => {
      seen.push(textOf(result));
      return undefined;
    });
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(seen).toEqual(['said hi', 'first']);
    expect(textOf(result)).toBe('first');
  });

  it('withholds the result when a hook throws, without rejecting', async () => {
    const registry = registryWithCard();
    registry.hook('tools/post-execute', () => {
      throw new Error('policy crashed');
    });
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(result.isError).toBe(true);
    expect('value' in result).toBe(false);
    expect(textOf(result)).toMatch(/policy crashed/);
  });

  it('stops calling a hook once it is disposed', async () => {
    const registry = registryWithCard();
    let calls = 0;
    const dispose = registry.hook('tools/post-execute', () => {
      calls++;
      return { kind: 'block', feedback: 'no' };
    });
    expect((await registry.dispatch({ name: 'echo', arguments: { text: 'a' } })).isError).toBe(true);
    dispose();
    dispose();
    expect((await registry.dispatch({ name: 'echo', arguments: { text: 'b' } })).isError).toBe(false);
    expect(calls).toBe(1);
  });

  it('sees the frozen exec of the call', async () => {
    const registry = registryWithCard();
    let callId: string | undefined;
    registry.hook('tools/post-execute', (exec) => {
      callId = exec.callId;
      return undefined;
    });
    await registry.dispatch({ name: 'echo', arguments: { text: 'hi' }, callId: 'call-7' });
    expect(callId).toBe('call-7');
  });
});
