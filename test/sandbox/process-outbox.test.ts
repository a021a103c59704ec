/**
 * The IPC outbox of the process runtime: the first message of a turn goes at
 * once, the rest of the turn as one batch at its end, in order; the receiver
 * unpacks either into the same sequence.
 */
import { describe, expect, it } from 'vitest';
import { Outbox, unbatch } from '../../sandbox/process/protocol.ts';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('Outbox', () => {
  it('sends the first message of a turn at once and the rest of the turn as one batch, in order', async () => {
    const written: unknown[] = [];
    const outbox = new Outbox<{ type: string; n: number }>((message) => written.push(message));
    for (let n = 0; n < 4; n++) outbox.send({ type: 'call', n });
    expect(written).toEqual([{ type: 'call', n: 0 }]);
    await nextTurn();
    expect(written).toHaveLength(2);
    expect(written[1]).toMatchObject({ type: 'batch' });
    await nextTurn();
    outbox.send({ type: 'log', n: 4 });
    expect(written).toHaveLength(3);
    expect(written.flatMap(unbatch)).toEqual([0, 1, 2, 3, 4].map((n) => ({ type: n === 4 ? 'log' : 'call', n })));
  });

  it('flush sends what is queued at once', () => {
    const written: unknown[] = [];
    const outbox = new Outbox<{ type: string }>((message) => written.push(message));
    outbox.send({ type: 'run' });
    outbox.send({ type: 'abort' });
    outbox.flush();
    expect(written).toEqual([{ type: 'run' }, { type: 'abort' }]);
  });

  it('unbatch yields nothing from a malformed batch', () => {
    expect(unbatch({ type: 'batch', messages: 'no' })).toEqual([]);
  });
});
