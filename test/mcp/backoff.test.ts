import { expect, it } from 'vitest';
import { retryDelayMs } from '../../src/mcp/backoff.ts';

const options = { initialDelayMs: 500, maxDelayMs: 30_000 };

it('doubles per attempt up to the ceiling, each delay drawn from its upper half', () => {
  const low = [1, 2, 3, 7, 8, 20].map((attempt) => retryDelayMs(attempt, options, () => 0));
  const high = [1, 2, 3, 7, 8, 20].map((attempt) => retryDelayMs(attempt, options, () => 1));
  expect(high).toEqual([500, 1_000, 2_000, 30_000, 30_000, 30_000]);
  expect(low).toEqual([250, 500, 1_000, 15_000, 15_000, 15_000]);
});

it('spreads servers that failed together over the interval', () => {
  let seed = 1;
  const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  const delays = new Set(Array.from({ length: 20 }, () => retryDelayMs(3, options, random)));
  expect(delays.size).toBeGreaterThan(10);
  for (const delay of delays) expect(delay).toBeGreaterThanOrEqual(1_000);
  for (const delay of delays) expect(delay).toBeLessThanOrEqual(2_000);
});
