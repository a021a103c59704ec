import { afterEach, expect, it } from 'vitest';
import { defineTool } from '../../src/define-tool.ts';
import { createBench, deferred, until, type Bench } from './harness.ts';

let bench: Bench;
afterEach(() => bench.close());

it('an outer abort disposes the isolate, aborts the in-flight call, abandons queued ones, and returns ABORTED after all settled', async () => {
  bench = createBench();
  const entered = deferred();
  const log: string[] = [];
  bench.registry.register(
    defineTool<Record<string, never>, { type: 'string' }>({
      name: 'slow',
      description: 'Waits until aborted.',
      parameters: {},
      output: { schema: { type: 'string' }, render: () => [{ type: 'text', text: 'done' }] },
      async execute(_args, { signal }) {
        log.push('slow started');
        entered.resolve();
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        // Cleanup after the abort takes a moment; run_code must wait for it.
        await new Promise((resolve) => setImmediate(resolve));
        log.push('slow settled');
        return 'stopped';
      },
    }),
  );
  bench.registry.register(
    defineTool<Record<string, never>, { type: 'null' }>({
      name: 'quick',
      description: 'Never reached.',
      parameters: {},
      output: { schema: { type: 'null' }, render: () => [] },
      async execute() {
        log.push('quick ran');
        return null;
      },
    }),
  );
  const controller = new AbortController();
  const run = bench.runCode("console.log('before the calls');\nawait Promise.all([tools.slow({}), tools.quick({}), tools.quick({})]);", { signal: controller.signal, callId: 'r' });
  await entered.promise;
  await until(() => log.length === 1);
  controller.abort();
  const result = await run;
  log.push('run_code returned');
  expect(result.isError && result.error.info?.code).toBe('ABORTED');
  // The logs the program wrote before it was cancelled stay in the response, as a timed-out run's do.
  expect(result.isError && result.error.message).toMatch(/^run_code was cancelled; its \d+ nested call\(s\) have stopped\n\nlogs:\nbefore the calls$/);
  expect(log).toEqual(['slow started', 'slow settled', 'run_code returned']);
  const events = bench.sink.events('s1').map((e) => [e.type, 'callId' in e ? e.callId : '']);
  expect(events).toEqual([
    ['tool/ptc-dispatch-start', 'r:ptc:1'],
    ['tool/ptc-dispatch', 'r:ptc:1'],
    ['tool/result', 'r'],
  ]);
  const settled = bench.sink.events('s1')[1];
  expect(settled).toMatchObject({ isError: true, error: { code: 'ABORTED' } });
});

it('the next run after an abort succeeds', async () => {
  bench = createBench();
  const result = await bench.runCode('return 40 + 2');
  expect(result.isError ? result.error.message : result.value).toEqual({ logs: [], result: 42 });
});
