import { afterAll, expect, it } from 'vitest';
import { createFakeHost, resultOf } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('a log flood is capped by bytes with one truncation marker, and the run still returns', async () => {
  const live: string[] = [];
  const outcome = await host.run('for (let i = 0; i < 200_000; i++) console.log("line " + i + " " + "x".repeat(50));\nreturn "done";', {
    limits: { maxLogBytes: 10_000 },
    onLog: (line) => live.push(line),
  });
  expect(resultOf(outcome)).toBe('done');
  const bytes = outcome.logs.slice(0, -1).reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
  expect(bytes).toBeLessThanOrEqual(10_000);
  expect(outcome.logs.at(-1)).toMatch(/logs truncated: the program logged more than 10000 bytes/);
  expect(outcome.logs.filter((line) => line.includes('logs truncated'))).toHaveLength(1);
  expect(live).toEqual(outcome.logs);
});

it('one huge line does not get through whole', async () => {
  const outcome = await host.run('console.log("y".repeat(5_000_000)); return 1', { limits: { maxLogBytes: 1_000 } });
  expect(outcome.logs).toHaveLength(1);
  expect(outcome.logs[0]).toMatch(/logs truncated/);
});
