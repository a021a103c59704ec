import { describe, expect, it } from 'vitest';
import { createMemoryEventSink } from '../../src/event-sinks/memory-sink.ts';
import { createToolRegistry } from '../../src/registry.ts';
import type { PostExecuteDecision, ToolExecutionResult } from '../../src/tool.ts';
import { bodyTool, echoTool, textOf } from './tool-fixtures.ts';

function codeOf(result: ToolExecutionResult): string | undefined {
  return result.isError ? result.error.info?.code : undefined;
}

const note = (text: string, source?: string) => ({ content: [{ type: 'text' as const, text }], ...(source === undefined ? {} : { source }) });

describe('post-execute additionalContexts', () => {
  it('attaches contexts alone, on success and failure, appended hook after hook, content as blocks', async () => {
    const registry = createToolRegistry();
    registry.register(echoTool());
    registry.register(
      bodyTool('fails', async () => {
        throw new Error('no');
      }),
    );
    registry.hook('tools/post-execute', () => ({ kind: 'accept', additionalContexts: [{ content: 'first', source: 'policy-a' }] }));
    registry.hook('tools/post-execute', () => ({ kind: 'accept', additionalContexts: [note('second')] }));
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(result.isError).toBe(false);
    expect(result.value).toEqual({ text: 'hi' });
    expect(result.additionalContexts).toEqual([note('first', 'policy-a'), note('second')]);
    expect(Object.isFrozen(result.additionalContexts)).toBe(true);

    const failed = await registry.dispatch({ name: 'fails', arguments: {} });
    expect(codeOf(failed)).toBe('TOOL_FAILED');
    expect(failed.additionalContexts).toEqual([note('first', 'policy-a'), note('second')]);
  });

  it('keeps earlier contexts when content is replaced; a value replacement or a block starts afresh', async () => {
    const registry = createToolRegistry();
    registry.register(echoTool());
    registry.hook('tools/post-execute', () => ({ kind: 'accept', additionalContexts: [note('about the old value')] }));
    let decision: PostExecuteDecision = { kind: 'accept', content: [{ type: 'text', text: 'shown' }], additionalContexts: [note('mine')] };
    registry.hook('tools/post-execute', () => decision);

    const replacedContent = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(textOf(replacedContent)).toBe('shown');
    expect(replacedContent.additionalContexts).toEqual([note('about the old value'), note('mine')]);

    decision = { kind: 'accept', value: { text: 'new' }, additionalContexts: [note('mine')] };
    const replacedValue = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(replacedValue.value).toEqual({ text: 'new' });
    expect(replacedValue.additionalContexts).toEqual([note('mine')]);

    decision = { kind: 'block', feedback: 'not now', additionalContexts: [note('why')] };
    const blocked = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(codeOf(blocked)).toBe('BLOCKED');
    expect(blocked.additionalContexts).toEqual([note('why')]);

    decision = { kind: 'block', feedback: 'not now' };
    const bare = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect('additionalContexts' in bare).toBe(false);
  });

  it('withholds the result, contexts included, when the contexts are malformed', async () => {
    const registry = createToolRegistry();
    registry.register(echoTool());
    registry.hook('tools/post-execute', () => ({ kind: 'accept', additionalContexts: [note('earlier')] }));
    registry.hook('tools/post-execute', () => ({ kind: 'accept', additionalContexts: [{ content: 42 }] }) as unknown as PostExecuteDecision);
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(codeOf(result)).toBe('INVALID_TOOL_OUTPUT');
    expect(textOf(result)).toMatch(/attached invalid contexts: additionalContexts\[0\]\.content/);
    expect('additionalContexts' in result).toBe(false);
  });

  it('treats an empty list as no change, and an accept with nothing as a hook error', async () => {
    const registry = createToolRegistry();
    registry.register(echoTool());
    let decision = { kind: 'accept', additionalContexts: [] } as unknown as PostExecuteDecision;
    registry.hook('tools/post-execute', () => decision);
    const kept = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(kept.isError).toBe(false);
    expect('additionalContexts' in kept).toBe(false);
    decision = { kind: 'accept' } as unknown as PostExecuteDecision;
    const empty = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(codeOf(empty)).toBe('INVALID_TOOL_OUTPUT');
  });

  it('runs synchronous and asynchronous hooks in order, an async rejection withholding the result', async () => {
    const registry = createToolRegistry();
    registry.register(echoTool());
    registry.hook('tools/post-execute', () => ({ kind: 'accept', additionalContexts: [note('sync 1')] }));
    registry.hook('tools/post-execute', async () => ({ kind: 'accept', additionalContexts: [note('async 2')] }));
    let fail = false;
    registry.hook('tools/post-execute', () => (fail ? Promise.reject(new Error('down')) : { kind: 'accept', additionalContexts: [note('sync 3')] }));
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(result.additionalContexts).toEqual([note('sync 1'), note('async 2'), note('sync 3')]);
    fail = true;
    const failed = await registry.dispatch({ name: 'echo', arguments: { text: 'hi' } });
    expect(codeOf(failed)).toBe('INVALID_TOOL_OUTPUT');
    expect(textOf(failed)).toMatch(/threw: down/);
  });

  it('makes wrong combinations type errors', () => {
    const decisions: PostExecuteDecision[] = [
      { kind: 'accept', additionalContexts: [note('ok')] },
      { kind: 'block', feedback: 'no', additionalContexts: [note('ok')] },
      // @ts-expect-error: replacing both content and value
      { kind: 'accept', content: [], value: 1 },
      // @ts-expect-error: a block carries no content
      { kind: 'block', feedback: 'no', content: [] },
      // @ts-expect-error: an accept that changes nothing
      { kind: 'accept' },
    ];
    expect(decisions).toHaveLength(5);
  });

  it('records the outer result\'s contexts on its tool/result event', async () => {
    const sink = createMemoryEventSink();
    const registry = createToolRegistry({ eventSink: sink });
    registry.register(echoTool());
    registry.hook('tools/post-execute', () => ({ kind: 'accept', additionalContexts: [note('remember this', 'policy')] }));
    await registry.dispatch({ name: 'echo', arguments: { text: 'hi' }, callId: 'c1', sessionId: 's' });
    const [event] = sink.events('s');
    expect(event).toMatchObject({ type: 'tool/result', callId: 'c1', additionalContexts: [note('remember this', 'policy')] });
  });
});
