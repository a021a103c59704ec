import { afterAll, expect, it } from 'vitest';
import { createFakeHost } from './harness.ts';

const host = createFakeHost();
afterAll(() => host.close());

it('console levels are captured in order: strings raw, other values readable, warn/error marked', async () => {
  const live: string[] = [];
  const outcome = await host.run(
    `console.log("plain", 1, -0, 2n, null, undefined, true);
     console.info({ a: [1, "two", { deep: { deeper: { deepest: { gone: 1 } } } }], "odd key": 1 });
     const cyclic: any = { name: "c" }; cyclic.self = cyclic;
     console.debug(cyclic, [function named() {}], Symbol("s"));
     console.warn("careful");
     console.error(new TypeError("bad"));`,
    { onLog: (line) => live.push(line) },
  );
  expect(outcome.logs).toEqual([
    'plain 1 -0 2n null undefined true',
    '{ a: [ 1, "two", { deep: { deeper: [Object] } } ], "odd key": 1 }',
    '{ name: "c", self: [Circular] } [ [Function named] ] Symbol(s)',
    '[warn] careful',
    '[error] TypeError: bad\n    at agent.ts:6:20',
  ]);
  expect(live).toEqual(outcome.logs);
});
