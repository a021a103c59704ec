import { describe, expect, it } from 'vitest';
import { createEventCapper } from '../../src/event-sinks/event-caps.ts';
import type { NewToolEvent } from '../../src/events.ts';

const inject = (text: string, n: number): NewToolEvent => ({
  type: 'agent/context',
  sessionId: 's',
  rootCallId: 'run',
  callId: `run:ptc:${n}`,
  name: 'note',
  content: [{ type: 'text', text }],
  source: { kind: 'plugin', plugin: 'notes' },
});

describe('event caps on the context channel', () => {
  it('caps an injected context per event and counts it toward its run, keeping its ids and source', () => {
    const cap = createEventCapper({ maxEventContentBytes: 100, maxRunEventBytes: 150 });
    const first = cap(inject('a'.repeat(120), 1));
    expect(first).toMatchObject({ type: 'agent/context', callId: 'run:ptc:1', source: { kind: 'plugin', plugin: 'notes' } });
    if (first.type !== 'agent/context') throw new Error('not an agent/context');
    expect(first.content[0]).toEqual({ type: 'text', text: 'a'.repeat(100) });
    expect(first.content[1]).toMatchObject({ type: 'text', text: expect.stringMatching(/over the 100-byte cap for one event/) });
    const second = cap(inject('b'.repeat(80), 2));
    if (second.type !== 'agent/context') throw new Error('not an agent/context');
    expect(second.content.at(-1)).toMatchObject({ text: expect.stringMatching(/this run's stored events reached the 150-byte cap/) });
  });

  it('caps the contexts a tool/result carries, keeping whole contexts while they fit', () => {
    const cap = createEventCapper({ maxEventContentBytes: 100 });
    const event: NewToolEvent = {
      type: 'tool/result',
      sessionId: 's',
      callId: 'run',
      name: 'run_code',
      isError: false,
      content: [{ type: 'text', text: 'ok' }],
      additionalContexts: [
        { content: [{ type: 'text', text: 'x'.repeat(60) }], source: 'a' },
        { content: 'y'.repeat(60) },
        { content: [{ type: 'text', text: 'z' }] },
      ],
    };
    const capped = cap(event);
    if (capped.type !== 'tool/result') throw new Error('not a tool/result');
    expect(capped.content).toEqual(event.content);
    expect(capped.additionalContexts?.slice(0, 1)).toEqual(event.additionalContexts?.slice(0, 1));
    expect(capped.additionalContexts).toHaveLength(2);
    expect(JSON.stringify(capped.additionalContexts?.[1])).toMatch(/2 of 3 contexts not stored: 121 bytes in all, 100 kept/);
    // Within the cap nothing changes.
    const small = { ...event, additionalContexts: [{ content: 'fits' }] };
    expect(cap(small)).toBe(small);
  });
});
