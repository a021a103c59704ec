/**
 * src/value-chunks.ts: a value that went in chunks is marked for the call whose sink took them; the
 * same frozen value reaching another call goes whole there.
 */
import { expect, it } from 'vitest';
import { snapshotFrozenJsonInChunks } from '../../src/json.ts';
import { chunksOf, markChunked } from '../../src/value-chunks.ts';

it('counts the chunks of a value only for the sink that took them', () => {
  const taken: string[] = [];
  const sink = (json: string) => void taken.push(json);
  const { value, chunks } = snapshotFrozenJsonInChunks(Array.from({ length: 2_500 }, (_, i) => i), 'value', sink);
  markChunked(value, chunks, sink);
  expect(chunksOf(value, sink)).toBe(taken.length);
  expect(taken.length).toBeGreaterThan(1);
  expect(chunksOf(value, () => undefined)).toBe(0);
  expect(chunksOf(value, undefined)).toBe(0);
});
