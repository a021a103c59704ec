import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxLimits } from '../../src/sandbox-runtime.ts';
import type { ProcessRuntime } from '../../sandbox/process/process-runtime.ts';
import { isGone, limits, processRuntime, request } from './process-helpers.ts';

let runtime: ProcessRuntime;
beforeAll(() => {
  runtime = processRuntime({ children: 2, queueTimeoutMs: 30_000 });
});
beforeEach(() => runtime.ready());
afterAll(() => runtime.close());

interface Bomb {
  code: string;
  limits: Partial<SandboxLimits>;
  kinds: RegExp;
}

const bombs: Record<string, Bomb> = {
  // isolated-vm's heap limit cannot stop this fill (a builtin looping in C++
  // over a dictionary array): the deadline or the RSS ceiling ends it, and
  // the child, whose isolate would keep running, is retired.
  'a 200-million-element array': { code: 'const a = new Array(2e8).fill(0);\nreturn a.length;', limits: { timeoutMs: 3_000 }, kinds: /^(memory|crashed|timeout)$/ },
  'string doubling': {
    code: 'const keep = [];\nlet s = "x";\nfor (;;) { s = [s, s].join(""); keep.push(s); }',
    limits: {},
    kinds: /^(memory|crashed)$/,
  },
  // The heap must admit the buffer for the copy to happen at all.
  'a 200 MB typed array copied to an Array': {
    code: 'const t = new Uint8Array(200 * 1024 * 1024);\nconst a = Array.from(t);\nreturn a.length;',
    limits: { memoryMiB: 256 },
    kinds: /^(memory|crashed)$/,
  },
};

describe('process runtime: heap bombs', () => {
  for (const [name, bomb] of Object.entries(bombs)) {
    it(`${name} fails its run in bounded time, its process is retired, and the next run succeeds`, async () => {
      const pids = runtime.processes().map((child) => child.pid);
      const outcome = await runtime.run(request(bomb.code, { limits: { ...limits, timeoutMs: 15_000, ...bomb.limits } }));
      expect(outcome.ok ? 'ok' : outcome.failure.kind).toMatch(bomb.kinds);
      await expect.poll(() => pids.filter(isGone).length, { timeout: 10_000 }).toBe(1);
      expect(await runtime.run(request('return 1 + 1'))).toMatchObject({ ok: true, resultJson: '2' });
    });
  }
});
