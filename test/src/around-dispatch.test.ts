import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../src/registry.ts';
import type { ToolExecutionResult, WrapperExec } from '../../src/tool.ts';
import { bodyTool, deferred, echoTool, textOf } from './tool-fixtures.ts';

function codeOf(result: ToolExecutionResult): string | undefined {
  return result.isError ? result.error.info?.code : undefined;
}

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** Lets every pending callback run (used only to show something has NOT happened yet). */
async function drain(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A tool that signals when it starts and returns once its signal aborts. */
function waitsForAbort(name = 'wait') {
  const started = deferred();
  let sawAbort = false;
  const tool = bodyTool(name, async (_args, exec) => {
    started.resolve();
    await aborted(exec.signal);
    sawAbort = exec.signal.aborted;
    return null;
  });
  return { tool, started: started.promise, sawAbort: () => sawAbort };
}

describe('around-dispatch', () => {
  it('lets a wrapper impose a deadline by replacing exec.signal', async () => {
    const registry = createToolRegistry();
    const { tool, started, sawAbort } = waitsForAbort();
    registry.register(tool);
    registry.hook('tools/execute', async (exec, next) => {
      const deadline = new AbortController();
      exec.signal = deadline.signal;
      const result = next();
      await started;
      deadline.abort();
      return result;
    });
    const result = await registry.dispatch({ name: 'wait', arguments: {} });
    expect(sawAbort()).toBe(true);
    expect(codeOf(result)).toBe('ABORTED');
  });

  it('still aborts the body when the caller’s signal aborts after a wrapper replaced it', async () => {
    const registry = createToolRegistry();
    const { tool, started, sawAbort } = waitsForAbort();
    registry.register(tool);
    registry.hook('tools/execute', async (exec, next) => {
      exec.signal = new AbortController().signal; // never aborts by itself
      return next();
    });
    const caller = new AbortController();
    const pending = registry.dispatch({ name: 'wait', arguments: {}, signal: caller.signal });
    await started;
    caller.abort();
    const result = await pending;
    expect(sawAbort()).toBe(true);
    expect(codeOf(result)).toBe('ABORTED');
  });

  it('lets a wrapper replace the signal but not remove it or change anything else', async () => {
    const registry = createToolRegistry();
    registry.register(bodyTool('t', async () => null));
    const attempts: Record<string, boolean> = {};
    let signalAfterDelete: unknown;
    let seen: unknown;
    const tryIt = (label: string, action: () => void): void => {
      try {
        action();
        attempts[label] = true;
      } catch (error) {
        attempts[label] = !(error instanceof TypeError);
      }
    };
    registry.hook('tools/execute', async (exec: WrapperExec, next) => {
      tryIt('remove', () => {
        (exec as { signal?: AbortSignal }).signal = undefined;
      });
      try {
        delete (exec as { signal?: AbortSignal }).signal;
      } catch {
        // refusing is as good as ignoring
      }
      signalAfterDelete = exec.signal;
      seen = { callId: exec.callId, name: exec.name, args: exec.arguments, frozen: Object.isFrozen(exec) };
      tryIt('callId', () => {
        (exec as { callId: string }).callId = 'forged';
      });
      tryIt('replace', () => {
        exec.signal = new AbortController().signal;
      });
      return next();
    });
    const result = await registry.dispatch({ name: 't', arguments: { a: 1 }, callId: 'w1' });
    expect(result.isError).toBe(false);
    expect(seen).toEqual({ callId: 'w1', name: 't', args: { a: 1 }, frozen: true });
    expect(attempts).toMatchObject({ remove: false, callId: false, replace: true });
    expect(signalAfterDelete).toBeInstanceOf(AbortSignal);
  });

  it('runs wrappers in registration order, the first outermost', async () => {
    const registry = createToolRegistry();
    const order: string[] = [];
    registry.register(bodyTool('t', async () => (order.push('body'), null)));
    registry.hook('tools/execute', async (_exec, next) => {
      order.push('a>');
      const r = await next();
      order.push('<a');
      return r;
    });
    registry.hook('tools/execute', async (_exec, next) => {
      order.push('b>');
      const r = await next();
      order.push('<b');
      return r;
    });
    await registry.dispatch({ name: 't', arguments: {} });
    expect(order).toEqual(['a>', 'b>', 'body', '<b', '<a']);
  });

  it('re-normalises a result from another dispatch: value re-validated and re-rendered, content and meta dropped', async () => {
    const registry = createToolRegistry();
    let bodyRuns = 0;
    registry.register(
      echoTool({
        parameters: { type: 'object', properties: { text: { type: 'string' }, prefix: { type: 'string' } }, additionalProperties: false },
        execute: async (args: { text: string }) => (bodyRuns++, { text: args.text }),
        output: {
          schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
          render: (args: { prefix: string }, v: { text: string }) => [{ type: 'text', text: `${args.prefix}:${v.text}` }],
          presentationMeta: (args: { prefix: string }) => ({ prefix: args.prefix }),
        },
      }),
    );
    let cached: ToolExecutionResult | undefined;
    registry.hook('tools/execute', async (_exec, next) => (cached ??= await next()));
    const first = await registry.dispatch({ name: 'echo', arguments: { text: 'hello', prefix: 'A' } });
    const second = await registry.dispatch({ name: 'echo', arguments: { text: 'other', prefix: 'B' } });
    expect(bodyRuns).toBe(1);
    expect(textOf(first)).toBe('A:hello');
    expect(first.meta).toEqual({ prefix: 'A' });
    expect(second).toEqual({ isError: false, value: { text: 'hello' }, content: [{ type: 'text', text: 'B:hello' }], meta: { prefix: 'B' } });
  });

  it('drops the content of a success a wrapper made itself and re-renders its value', async () => {
    const registry = createToolRegistry();
    let ran = false;
    registry.register(echoTool({ execute: async () => ((ran = true), { text: 'real' }) }));
    registry.hook('tools/execute', async () => ({ isError: false, value: { text: 'forged' }, content: [{ type: 'text', text: 'lies' }], meta: { x: 1 } }));
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'x' } });
    expect(ran).toBe(false);
    expect(result).toEqual({ isError: false, value: { text: 'forged' }, content: [{ type: 'text', text: 'forged' }] });
  });

  it('fails with INVALID_TOOL_OUTPUT when a cached value no longer fits the current output, without running the body', async () => {
    const registry = createToolRegistry();
    const disposeV1 = registry.register(echoTool());
    let cached: ToolExecutionResult | undefined;
    registry.hook('tools/execute', async (_exec, next) => (cached ??= await next()));
    await registry.dispatch({ name: 'echo', arguments: { text: 'v1' } });
    disposeV1();
    let v2Ran = false;
    registry.register(
      echoTool({
        execute: async () => ((v2Ran = true), { count: 1 }),
        output: {
          schema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'], additionalProperties: false },
          render: () => [],
        },
      }),
    );
    const result = await registry.dispatch({ name: 'echo', arguments: { text: 'v2' } });
    expect(v2Ran).toBe(false);
    expect(codeOf(result)).toBe('INVALID_TOOL_OUTPUT');
    expect(textOf(result)).toMatch(/value/);
  });

  it('passes a failure from another dispatch as a failure', async () => {
    const registry = createToolRegistry();
    registry.register(bodyTool('boom', async () => { throw new Error('first failure'); }));
    let cached: ToolExecutionResult | undefined;
    registry.hook('tools/execute', async (_exec, next) => (cached ??= await next()));
    await registry.dispatch({ name: 'boom', arguments: {} });
    const second = await registry.dispatch({ name: 'boom', arguments: {} });
    expect(second).toEqual(cached);
    expect(second).not.toBe(cached);
    expect(codeOf(second)).toBe('TOOL_FAILED');
  });

  it('answers a pre-aborted signal with ABORTED_BEFORE_DISPATCH; neither wrappers nor body run', async () => {
    const registry = createToolRegistry();
    let ran = false;
    let wrapped = false;
    registry.register(bodyTool('t', async () => ((ran = true), null)));
    registry.hook('tools/execute', async (_exec, next) => ((wrapped = true), next()));
    const caller = new AbortController();
    caller.abort();
    const result = await registry.dispatch({ name: 't', arguments: {}, signal: caller.signal });
    expect(codeOf(result)).toBe('ABORTED_BEFORE_DISPATCH');
    expect(ran).toBe(false);
    expect(wrapped).toBe(false);
  });

  it('reports ABORTED only after a body that ignores its signal has settled', async () => {
    const registry = createToolRegistry();
    const started = deferred();
    const release = deferred();
    const order: string[] = [];
    registry.register(
      bodyTool('stubborn', async () => {
        started.resolve();
        await release.promise;
        order.push('body settled');
        return { done: true };
      }),
    );
    const caller = new AbortController();
    const pending = registry.dispatch({ name: 'stubborn', arguments: {}, signal: caller.signal }).then((r) => {
      order.push('result');
      return r;
    });
    await started.promise;
    caller.abort();
    await drain();
    expect(order).toEqual([]);
    release.resolve();
    const result = await pending;
    expect(order).toEqual(['body settled', 'result']);
    expect(codeOf(result)).toBe('ABORTED');
    expect('value' in result).toBe(false);
  });

  it('enforces timeoutMs as TOOL_TIMEOUT, aborting the body', async () => {
    const registry = createToolRegistry();
    const { tool, sawAbort } = waitsForAbort('slow');
    registry.register({ ...tool, timeoutMs: 20 });
    const result = await registry.dispatch({ name: 'slow', arguments: {} });
    expect(codeOf(result)).toBe('TOOL_TIMEOUT');
    expect(textOf(result)).toMatch(/20 ms/);
    expect(sawAbort()).toBe(true);
  });

  it("under timeoutMs, the caller's abort still reaches the body as ABORTED, and no call leaves a listener on the caller's signal", async () => {
    const registry = createToolRegistry();
    const { tool, started, sawAbort } = waitsForAbort('bounded');
    registry.register({ ...tool, timeoutMs: 60_000 });
    registry.register({ ...bodyTool('quick', async () => null), timeoutMs: 60_000 });
    const caller = new AbortController();
    for (let i = 0; i < 3; i++) expect((await registry.dispatch({ name: 'quick', arguments: {}, signal: caller.signal })).isError).toBe(false);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    const pending = registry.dispatch({ name: 'bounded', arguments: {}, signal: caller.signal });
    await started;
    caller.abort();
    expect(codeOf(await pending)).toBe('ABORTED');
    expect(sawAbort()).toBe(true);
  });

  it('turns a throwing wrapper into a failed result', async () => {
    const registry = createToolRegistry();
    registry.register(bodyTool('t', async () => null));
    registry.hook('tools/execute', async () => {
      throw new Error('wrapper broke');
    });
    const result = await registry.dispatch({ name: 't', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/wrapper broke/);
  });
});
