import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedPrettyJson } from '../../src/code-mode/pretty-json.ts';
import { renderRunCode } from '../../src/code-mode/render.ts';
import { DEFAULT_EVENT_CAPS, createEventCapper } from '../../src/event-sinks/event-caps.ts';
import type { NewToolEvent } from '../../src/events.ts';
import type { FrozenJsonValue, JsonValue } from '../../src/json.ts';

const nested = (text: string, n: number): NewToolEvent => ({
  type: 'tool/ptc-dispatch',
  sessionId: 's',
  rootCallId: 'run',
  parentCallId: 'run',
  callId: `run:ptc:${n}`,
  name: 'read',
  isError: false,
  content: [{ type: 'text', text }],
});
const textOf = (event: NewToolEvent) => ('content' in event ? event.content.map((b) => (b.type === 'text' ? b.text : '')).join('') : '');

describe('bounded pretty-printing of a run result', () => {
  it('is JSON.stringify(value, null, 2) whenever it fits', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const normal = JSON.parse(JSON.stringify(value)) as FrozenJsonValue; // -0 and friends as JSON has them
        expect(boundedPrettyJson(normal, 1e9)).toEqual({ text: JSON.stringify(normal, null, 2), truncated: false });
      }),
      { seed: 1212, numRuns: 300 },
    );
  });

  it('stops at the cap with a prefix of the full text, never splitting a character', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 200 }), (value, cap) => {
        const normal = JSON.parse(JSON.stringify(value)) as FrozenJsonValue;
        const full = JSON.stringify(normal, null, 2);
        const { text, truncated } = boundedPrettyJson(normal, cap);
        expect(Buffer.byteLength(text)).toBeLessThanOrEqual(cap);
        expect(full.startsWith(text)).toBe(true);
        expect(truncated).toBe(Buffer.byteLength(full) > cap);
      }),
      { seed: 1313, numRuns: 300 },
    );
  });

  it('renders the deeply nested 117-byte result within the cap, with a marker; a small result unchanged', () => {
    let v: unknown = new Array(250_000).fill(0);
    for (let i = 0; i < 990; i++) v = [v];
    const [block] = renderRunCode({ logs: ['a log line'], result: v as FrozenJsonValue }, 64 * 1024);
    const text = (block as { text: string }).text;
    expect(Buffer.byteLength(text)).toBeLessThan(64 * 1024 + 400);
    expect(text.startsWith('a log line\n[\n  [\n')).toBe(true);
    expect(text).toMatch(/\[result text truncated at 65536 bytes .*the returned value itself is complete/);
    expect(renderRunCode({ logs: [], result: { a: [1, 'é'] } }, 64 * 1024)).toEqual([{ type: 'text', text: JSON.stringify({ a: [1, 'é'] }, null, 2) }]);
    const long = 'ü'.repeat(100);
    const [cut] = renderRunCode({ logs: [], result: long }, 51);
    expect((cut as { text: string }).text).toMatch(/^ü{25}\n\[result text truncated at 51 bytes \(a string of 200 bytes\)/);
  });
});

describe('event caps', () => {
  it('refuses a cap that is not a whole number of at least 1, naming each', () => {
    expect(() => createEventCapper({ maxRunEventBytes: 0, maxEventArgumentBytes: 1.5 })).toThrow(
      'invalid event caps: limits.maxRunEventBytes: must be >= 1; limits.maxEventArgumentBytes: must be integer',
    );
  });

  it('cuts one event past maxEventContentBytes with a marker stating the original size', () => {
    const cap = createEventCapper({ maxEventContentBytes: 100, maxRunEventBytes: 10_000 });
    const stored = cap(nested('x'.repeat(1_000), 1));
    expect(textOf(stored)).toMatch(/^x{100}\[content truncated: 1000 bytes in 1 block, 100 kept; over the 100-byte cap for one event/);
    const small = nested('small', 2);
    expect(cap(small)).toBe(small);
  });

  it('past maxRunEventBytes later nested events keep their metadata and a marker; the next run starts afresh', () => {
    const cap = createEventCapper({ maxEventContentBytes: 1_000, maxRunEventBytes: 2_500 });
    const stored = Array.from({ length: 10 }, (_, i) => cap(nested('y'.repeat(1_000), i + 1)));
    const kept = stored.map((e) => Buffer.byteLength(textOf(e)));
    expect(stored.map((e) => (e as { callId: string }).callId)).toEqual(Array.from({ length: 10 }, (_, i) => `run:ptc:${i + 1}`));
    expect(stored.every((e) => e.type === 'tool/ptc-dispatch' && e.isError === false && e.name === 'read')).toBe(true);
    expect(textOf(stored[0])).toBe('y'.repeat(1_000));
    expect(textOf(stored[3])).toMatch(/^\[content truncated: 1000 bytes in 1 block, 0 kept; this run's stored events reached the 2500-byte cap/);
    expect(kept.slice(0, 3).reduce((a, b) => a + b, 0) - 2 * 1_000).toBeLessThan(1_000 + 200);
    // Arguments count too.
    const start: NewToolEvent = { type: 'tool/ptc-dispatch-start', sessionId: 's', rootCallId: 'run', parentCallId: 'run', callId: 'run:ptc:11', name: 'read', arguments: { file_path: 'a' } };
    expect((cap(start) as { arguments: JsonValue }).arguments).toMatchObject({ bytes: 17, truncated: expect.stringMatching(/not stored whole: this run's stored events reached/) });
    // The run's tool/result ends its accounting; a new run gets the whole budget.
    cap({ type: 'tool/result', sessionId: 's', callId: 'run', name: 'run_code', isError: false, content: [] });
    expect(textOf(cap(nested('z'.repeat(1_000), 1)))).toBe('z'.repeat(1_000));
  });

  it('keeps at most maxEventArgumentBytes of a nested call\'s arguments, with a marker, the full size and the start of the JSON', () => {
    const cap = createEventCapper();
    const big = { path: 'a', text: 'é'.repeat(400_000) };
    const json = JSON.stringify(big);
    const start: NewToolEvent = { type: 'tool/ptc-dispatch-start', sessionId: 's', rootCallId: 'r', parentCallId: 'r', callId: 'r:ptc:1', name: 'write', arguments: big };
    const stored = (cap(start) as unknown as { arguments: { truncated: string; bytes: number; preview: string } }).arguments;
    expect(stored.bytes).toBe(Buffer.byteLength(json));
    expect(stored.truncated).toMatch(/arguments of 800\d{3} bytes not stored whole: over the 65536-byte cap for stored arguments \(limits\.maxEventArgumentBytes\)/);
    expect(Buffer.byteLength(stored.preview)).toBeLessThanOrEqual(64 * 1024);
    expect(Buffer.byteLength(stored.preview)).toBeGreaterThan(64 * 1024 - 4);
    expect(json.startsWith(stored.preview)).toBe(true);
    // Small arguments are kept as they are.
    const small: NewToolEvent = { ...start, callId: 'r:ptc:2', arguments: { path: 'b' } };
    expect(cap(small)).toBe(small);
  });

  it('a run of many large-argument calls stores no more than maxRunEventBytes of arguments', () => {
    const cap = createEventCapper();
    const text = 'x'.repeat(200 * 1024);
    let total = 0;
    for (let i = 1; i <= 100; i++) {
      const event = cap({ type: 'tool/ptc-dispatch-start', sessionId: 's', rootCallId: 'r', parentCallId: 'r', callId: `r:ptc:${i}`, name: 'write', arguments: { text } });
      total += Buffer.byteLength(JSON.stringify((event as { arguments: JsonValue }).arguments));
    }
    expect(DEFAULT_EVENT_CAPS.maxRunEventBytes).toBe(4 * 1024 * 1024);
    expect(total).toBeLessThan(4 * 1024 * 1024 + 100 * 300);
    expect(total).toBeGreaterThan(4 * 1024 * 1024 - 64 * 1024);
  });

  it('caps a tool/result content and error message', () => {
    const cap = createEventCapper({ maxEventContentBytes: 50 });
    const stored = cap({
      type: 'tool/result',
      sessionId: 's',
      callId: 'c',
      name: 'run_code',
      isError: true,
      content: [{ type: 'text', text: 'e'.repeat(500) }],
      error: { message: 'm'.repeat(500), info: { name: 'PtcError', code: 'CODE_RUN_FAILED' } },
    });
    expect(stored).toMatchObject({ isError: true, error: { info: { code: 'CODE_RUN_FAILED' }, message: expect.stringMatching(/^m{50}\n\[message of 500 bytes truncated/) } });
    expect(textOf(stored)).toMatch(/^e{50}\[content truncated: 500 bytes/);
  });
});
