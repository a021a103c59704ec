/**
 * The IPC outbox of the process runtime: what one turn sends travels as one
 * batch, in order; a lone message travels as itself; the receiver unpacks
 * either into the same sequence.
 */
import { describe, expect, it } from 'vitest';
import { Outbox, unbatch } from '../../sandbox/process/protocol.ts';

describe('Outbox', () => {
  it('sends one turn of messages as one batch, in order, and a lone message as itself', async () => {
    const written: unknown[] = [];
    const outbox = new Outbox<{ type: string; n: number }>((message) => written.push(message));
    for (let n = 0; n < 3; n++) outbox.send({ type: 'call', n });
    expect(written).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    outbox.send({ type: 'log', n: 3 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toHaveLength(2);
    expect(written.flatMap(unbatch)).toEqual([0, 1, 2, 3].map((n) => ({ type: n === 3 ? 'log' : 'call', n })));
    expect(written[1]).toEqual({ type: 'log', n: 3 });
  });

  it('flush sends what is queued at once', () => {
    const written: unknown[] = [];
    const outbox = new Outbox<{ type: string }>((message) => written.push(message));
    outbox.send({ type: 'abort' });
    outbox.flush();
    expect(written).toEqual([{ type: 'abort' }]);
  });

  it('unbatch yields nothing from a malformed batch', () => {
    expect(unbatch({ type: 'batch', messages: 'no' })).toEqual([]);
  });
});
