/**
 * src/value-chunks.ts: a value that went in chunks is marked for the call whose sink took them; the
 * same frozen value reaching another call goes whole there.
 */
import { expect, it } from 'vitest';
import { snapshotFrozenJsonInChunks } from '../../src/json.ts';
import { chunkedValueOf, markChunked } from '../../src/value-chunks.ts';

it('counts the chunks of a value only for the sink that took them', () => {
  const taken: string[] = [];
  const sink = (json: string) => void taken.push(json);
  const snapshot = snapshotFrozenJsonInChunks(Array.from({ length: 2_500 }, (_, i) => i), 'value', sink);
  markChunked(snapshot, sink);
  expect(chunkedValueOf(snapshot.value, sink)).toEqual({ chunks: taken.length, member: undefined });
  expect(taken.length).toBeGreaterThan(1);
  expect(chunkedValueOf(snapshot.value, () => undefined)).toBeUndefined();
  expect(chunkedValueOf(snapshot.value, undefined)).toBeUndefined();
});

it("names the member the chunks make of an object, with the object's text around it", () => {
  const taken: string[] = [];
  const sink = (json: string) => void taken.push(json);
  const snapshot = snapshotFrozenJsonInChunks({ total: 2_500, items: Array.from({ length: 2_500 }, (_, i) => i), next: null }, 'value', sink);
  markChunked(snapshot, sink);
  expect(chunkedValueOf(snapshot.value, sink)).toEqual({ chunks: taken.length, member: { path: ['items'], frameJson: '{"total":2500,"items":null,"next":null}' } });
  // A value that went whole is not marked.
  const whole = snapshotFrozenJsonInChunks({ items: [1, 2] }, 'value', sink);
  markChunked(whole, sink);
  expect(chunkedValueOf(whole.value, sink)).toBeUndefined();
});
