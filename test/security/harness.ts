/**
 * Real parts for the security suite: a registry with an in-memory sink, a
 * few ordinary tools, code mode on the runtime under test, and the checks
 * every hostile program must pass (typed failure or harmless success, no
 * host path in anything the program or the model can read, host sentinels
 * untouched).
 */
import { expect } from 'vitest';
import { createCodeModeCore, type CodeMode } from '../../src/code-mode/code-mode.ts';
import type { CodeModeLimits } from '../../src/code-mode/limits.ts';
import { defineTool } from '../../src/define-tool.ts';
import { createMemoryEventSink, type MemoryEventSink } from '../../src/event-sinks/memory-sink.ts';
import { createToolRegistry } from '../../src/registry.ts';
import type { SandboxFailureKind, SandboxRuntime } from '../../src/sandbox-runtime.ts';
import type { ToolExecutionResult, ToolRegistry } from '../../src/tool.ts';

export const FAILURE_KINDS: readonly SandboxFailureKind[] = [
  'syntax',
  'typecheck',
  'exception',
  'timeout',
  'abort',
  'memory',
  'output-limit',
  'call-limit',
  'invalid-output',
  'crashed',
  'busy',
];

/** Text a program must never be able to read: host paths and host module names. */
export const HOST_LEAK = /\/work\/|node_modules|node:internal|file:\/\/|isolated-vm|<isolated-vm boundary>|\/tmp\/|\\Users\\|\/home\//;

export interface SecurityBench {
  registry: ToolRegistry;
  sink: MemoryEventSink;
  codeMode: CodeMode;
  /** Host-side count of calls per tool. */
  calls: Map<string, number>;
  run(code: string, timeoutMs?: number): Promise<ToolExecutionResult>;
  close(): Promise<void>;
}

const json = { type: 'json' } as const;

/** echo (returns its arguments), nested (a nested value), fail (throws), slow (waits for the signal or ms). */
export function createSecurityBench(runtime: SandboxRuntime, limits: Partial<CodeModeLimits> = {}): SecurityBench {
  const sink = createMemoryEventSink();
  const registry = createToolRegistry({ eventSink: sink });
  const calls = new Map<string, number>();
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
  registry.register(
    defineTool({
      name: 'echo',
      description: 'Returns its arguments.',
      parameters: { value: { type: 'json' } },
      output: { schema: json, render: () => [{ type: 'text', text: 'echoed' }] },
      async execute(args) {
        count('echo');
        return args;
      },
    }),
  );
  registry.register(
    defineTool({
      name: 'nested',
      description: 'Returns a nested value.',
      parameters: {},
      output: { schema: json, render: () => [{ type: 'text', text: 'nested' }] },
      async execute() {
        count('nested');
        return { list: [1, { deep: ['x'] }], flag: true };
      },
    }),
  );
  registry.register(
    defineTool({
      name: 'fail',
      description: 'Always fails.',
      parameters: {},
      output: { schema: json, render: () => [{ type: 'text', text: 'never' }] },
      async execute() {
        count('fail');
        throw new Error('the tool failed on purpose');
      },
    }),
  );
  registry.register(
    defineTool({
      name: 'slow',
      description: 'Waits ms (default 10) or until aborted.',
      parameters: { ms: { type: 'integer' } },
      output: { schema: json, render: () => [{ type: 'text', text: 'slow' }] },
      async execute(args, exec) {
        count('slow');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, args.ms ?? 10);
          exec.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
        return null;
      },
    }),
  );
  const codeMode = createCodeModeCore({ registry, runtime, limits });
  let n = 0;
  return {
    registry,
    sink,
    codeMode,
    calls,
    run(code, timeoutMs) {
      return registry.dispatch({
        name: 'run_code',
        arguments: { code, description: 'hostile program', ...(timeoutMs === undefined ? {} : { timeoutMs }) },
        callId: `sec-${++n}`,
        sessionId: 'security',
      });
    },
    async close() {
      await codeMode.close();
    },
  };
}

/** The failure kind of a CODE_RUN_FAILED result, or undefined on success. Fails on any other failure. */
export function kindOf(result: ToolExecutionResult): SandboxFailureKind | undefined {
  if (!result.isError) return undefined;
  expect(result.error.info?.code, result.error.message).toBe('CODE_RUN_FAILED');
  // The kind is a field; the message names the same kind for the model.
  const kind = result.error.info?.kind;
  expect(FAILURE_KINDS, result.error.message).toContain(kind);
  expect(result.error.message.startsWith(`code run failed (${kind})`), result.error.message).toBe(true);
  return kind;
}

/** The program's returned value; fails the test when the run failed. */
export function resultOf(result: ToolExecutionResult): unknown {
  if (result.isError) throw new Error(`run failed: ${result.error.message}`);
  return (result.value as { result?: unknown }).result;
}

/** Everything the model or a client can read of a result: no host path, no host frame. */
export function expectNoHostLeak(result: ToolExecutionResult): void {
  const text = JSON.stringify(result);
  expect(text).not.toMatch(HOST_LEAK);
  expect(text).not.toContain(process.cwd());
}

export const SENTINEL = 'intact';

/** Plants the host sentinels (globalThis.__ptcSentinel, process.env.PTC_SENTINEL). */
export function plantSentinels(): void {
  (globalThis as { __ptcSentinel?: unknown }).__ptcSentinel = SENTINEL;
  process.env.PTC_SENTINEL = SENTINEL;
}

export function expectSentinelsIntact(): void {
  expect((globalThis as { __ptcSentinel?: unknown }).__ptcSentinel).toBe(SENTINEL);
  expect(process.env.PTC_SENTINEL).toBe(SENTINEL);
  expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'pwned')).toBe(false);
  expect(({} as { pwned?: unknown }).pwned).toBeUndefined();
}
