/**
 * `SandboxRunRequest.onStart`, in every runtime: called once, when the
 * program starts (its deadline counts from there), and never for a run that
 * never starts.
 */
import { afterAll, expect, it } from 'vitest';
import { createTestRuntime } from '../helpers/runtimes.ts';
import { request } from './process-helpers.ts';
import type { JsonValue } from '../../src/json.ts';

const runtime = createTestRuntime(undefined, { warmPoolMemoryMiB: 128 });
afterAll(() => runtime.close());

it('is called once for a run that starts, before its first tool call', async () => {
  const seen: string[] = [];
  const outcome = await runtime.run(
    request('await tools.wait({});\nreturn 1;', {
      onStart: () => seen.push('start'),
      callTool: async (_name, argsJson) => {
        seen.push('call');
        return { ok: true, value: JSON.parse(argsJson) as JsonValue };
      },
    }),
  );
  expect(outcome).toMatchObject({ ok: true, resultJson: '1' });
  expect(seen).toEqual(['start', 'call']);
});

it('is not called for a run cancelled before it starts', async () => {
  let starts = 0;
  const controller = new AbortController();
  controller.abort();
  const cancelled = await runtime.run(request('return 1;', { signal: controller.signal, onStart: () => starts++ }));
  expect(cancelled).toMatchObject({ ok: false, failure: { kind: 'abort' } });
  expect(starts).toBe(0);
});
