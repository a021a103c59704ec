import { describe, expect, it } from 'vitest';
import { createMemoryEventSink } from '../../src/event-sinks/memory-sink.ts';
import type { EventSink, NewToolEvent, ToolEvent } from '../../src/events.ts';
import { createToolRegistry } from '../../src/registry.ts';
import { bodyTool, deferred, echoTool } from './tool-fixtures.ts';

function cardEcho() {
  return echoTool({
    output: {
      schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      render: (_a: unknown, v: { text: string }) => [{ type: 'text', text: `said ${v.text}` }],
      presentationMeta: (_a: unknown, v: { text: string }) => ({ length: v.text.length }),
    },
  });
}

describe('tool/result events', () => {
  it('records an outer success with content, isError and meta, never the value', async () => {
    const sink = createMemoryEventSink();
    const registry = createToolRegistry({ eventSink: sink });
    registry.register(cardEcho());
    await registry.dispatch({ name: 'echo', arguments: { text: 'canonical-secret' }, callId: 'c1', sessionId: 's1' });
    const [event] = sink.events('s1');
    expect(event).toMatchObject({
      type: 'tool/result',
      sessionId: 's1',
      seq: 1,
      callId: 'c1',
      name: 'echo',
      isError: false,
      content: [{ type: 'text', text: 'said canonical-secret' }],
      meta: { length: 16 },
    });
    expect(Object.keys(event).sort()).toEqual(['at', 'callId', 'content', 'isError', 'meta', 'name', 'seq', 'sessionId', 'type']);
    expect(new Date(event.at).toISOString()).toBe(event.at);
    expect(JSON.stringify(event)).not.toMatch(/"value"/);
  });

  it('records a failure with its error', async () => {
    const sink = createMemoryEventSink();
    const registry = createToolRegistry({ eventSink: sink });
    registry.register(bodyTool('boom', async () => { throw new Error('nope'); }));
    await registry.dispatch({ name: 'boom', arguments: {}, callId: 'c2' });
    await registry.dispatch({ name: 'missing', arguments: {}, callId: 'c3' });
    const [failed, unknown] = sink.events('default');
    expect(failed).toMatchObject({
      callId: 'c2',
      isError: true,
      content: [{ type: 'text', text: 'Error: nope' }],
      error: { message: 'nope', info: { name: 'Error', code: 'TOOL_FAILED' } },
    });
    expect('value' in failed).toBe(false);
    expect(unknown).toMatchObject({ callId: 'c3', name: 'missing', isError: true, error: { info: { code: 'UNKNOWN_TOOL' } } });
  });

  it('records nothing for nested calls (run_code owns those events)', async () => {
    const sink = createMemoryEventSink();
    const registry = createToolRegistry({ eventSink: sink });
    registry.register(cardEcho());
    registry.register(
      bodyTool('outer', async (_args, exec) => {
        await registry.dispatch({ name: 'echo', arguments: { text: 'inner' }, parent: exec.token, sessionId: exec.sessionId });
        return null;
      }),
    );
    await registry.dispatch({ name: 'outer', arguments: {}, callId: 'o1' });
    expect(sink.events().map((e) => (e as { callId: string }).callId)).toEqual(['o1']);
  });

  it('numbers events per session from 1', async () => {
    const sink = createMemoryEventSink();
    const registry = createToolRegistry({ eventSink: sink });
    registry.register(cardEcho());
    for (const sessionId of ['a', 'b', 'a', 'a', 'b']) await registry.dispatch({ name: 'echo', arguments: { text: 'x' }, sessionId });
    expect(sink.events('a').map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(sink.events('b').map((e) => e.seq)).toEqual([1, 2]);
    expect(sink.events().map((e) => `${e.sessionId}${e.seq}`)).toEqual(['a1', 'b1', 'a2', 'a3', 'b2']);
  });

  it('waits for the sink flush before the dispatch returns', async () => {
    const gate = deferred();
    const order: string[] = [];
    const sink: EventSink = {
      append(event) {
        order.push('append');
        return { ...event, seq: 1, at: new Date().toISOString() } as ToolEvent;
      },
      async flush(sessionId) {
        order.push(`flush ${sessionId}`);
        await gate.promise;
        order.push('flushed');
      },
    };
    const registry = createToolRegistry({ eventSink: sink });
    registry.register(cardEcho());
    const pending = registry.dispatch({ name: 'echo', arguments: { text: 'x' }, sessionId: 's9' }).then(() => order.push('returned'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['append', 'flush s9']);
    gate.resolve();
    await pending;
    expect(order).toEqual(['append', 'flush s9', 'flushed', 'returned']);
  });

  it('still returns the result when the sink fails, and reports the lost event', async () => {
    const reported: { error: unknown; event: NewToolEvent }[] = [];
    const registry = createToolRegistry({
      eventSink: {
        append: () => {
          throw new Error('disk full');
        },
      },
      onSinkError: (error, event) => reported.push({ error, event }),
    });
    registry.register(cardEcho());
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'x' }, callId: 'c5' });
    expect(result.isError).toBe(false);
    expect(reported).toHaveLength(1);
    expect((reported[0].error as Error).message).toBe('disk full');
    expect(reported[0].event).toMatchObject({ type: 'tool/result', callId: 'c5' });
  });

  it('reports a failing flush the same way', async () => {
    const reported: unknown[] = [];
    const registry = createToolRegistry({
      eventSink: {
        append: (event) => ({ ...event, seq: 1, at: '' }) as ToolEvent,
        flush: async () => {
          throw new Error('fsync failed');
        },
      },
      onSinkError: (error) => reported.push(error),
    });
    registry.register(cardEcho());
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'x' } });
    expect(result.isError).toBe(false);
    expect((reported[0] as Error).message).toBe('fsync failed');
  });
});
