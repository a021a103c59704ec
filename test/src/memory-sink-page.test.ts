import { describe, expect, it } from 'vitest';
import { createMemoryEventSink } from '../../src/event-sinks/memory-sink.ts';

describe('memory sink pages', () => {
  it('pages like the durable sink: seq > after, at most limit, next absent at the end', () => {
    const sink = createMemoryEventSink();
    for (let i = 0; i < 25; i++) sink.append({ type: 'tool/result', sessionId: 'm', callId: `c${i}`, name: 'echo', isError: false, content: [] });
    sink.append({ type: 'tool/result', sessionId: 'other', callId: 'x', name: 'echo', isError: false, content: [] });
    const first = sink.readPage('m', { limit: 10 });
    expect(first.events.map((e) => e.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(first.next).toBe(10);
    const last = sink.readPage('m', { after: 20, limit: 10 });
    expect(last.events.map((e) => e.seq)).toEqual([21, 22, 23, 24, 25]);
    expect(last.next).toBeUndefined();
    expect(sink.readPage('m', { after: 999_999 })).toEqual({ events: [] });
    expect(sink.readPage('never')).toEqual({ events: [] });
    expect(sink.readPage('m', { maxBytes: 1 }).events.length).toBe(1);
  });
});
