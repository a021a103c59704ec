/**
 * Real parts for code-mode tests: a registry with an in-memory event sink,
 * the sandbox runtime selected for this worker (in-process, or process in
 * the vitest project of that name), and code mode registered on it.
 */
import { defineTool } from '../../src/define-tool.ts';
import { createCodeModeCore, type CodeMode, type CodeModeCoreOptions } from '../../src/code-mode/code-mode.ts';
import { createMemoryEventSink, type MemoryEventSink } from '../../src/event-sinks/memory-sink.ts';
import { createToolRegistry } from '../../src/registry.ts';
import type { SandboxRuntime } from '../../src/sandbox-runtime.ts';
import type { DispatchRequest, ToolExecutionResult, ToolRegistry } from '../../src/tool.ts';
import { createTestRuntime } from '../helpers/runtimes.ts';

export interface Bench {
  registry: ToolRegistry;
  sink: MemoryEventSink;
  codeMode: CodeMode;
  /** Dispatches run_code as an outer call (callId `run-<n>`, session `s1` unless given). */
  runCode(code: string, extra?: Partial<DispatchRequest> & { timeoutMs?: number }): Promise<ToolExecutionResult>;
  close(): Promise<void>;
}

/** A concurrency-safe tool that answers "pong". */
export const ping = defineTool({
  name: 'ping',
  description: 'Answers pong.',
  parameters: {},
  output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
  isConcurrencySafe: () => true,
  async execute() {
    return 'pong';
  },
});

let shared: SandboxRuntime | undefined;
/** One runtime per test file (a worker): isolates are fresh per run anyway. */
export function sharedRuntime(): SandboxRuntime {
  shared ??= createTestRuntime();
  return shared;
}

export function createBench(options: Partial<Omit<CodeModeCoreOptions, 'registry'>> = {}): Bench {
  const sink = createMemoryEventSink();
  const registry = createToolRegistry({ eventSink: sink });
  const codeMode = createCodeModeCore({ registry, runtime: sharedRuntime(), ...options });
  let n = 0;
  return {
    registry,
    sink,
    codeMode,
    runCode(code, extra = {}) {
      const { timeoutMs, ...request } = extra;
      return registry.dispatch({
        name: 'run_code',
        arguments: { code, description: 'test program', ...(timeoutMs === undefined ? {} : { timeoutMs }) },
        callId: `run-${++n}`,
        sessionId: 's1',
        ...request,
      });
    },
    async close() {
      await codeMode.close();
    },
  };
}

/** The value of a successful result; fails the test otherwise. */
export function valueOf(result: ToolExecutionResult): { logs: string[]; result?: unknown } {
  if (result.isError) throw new Error(`run_code failed: ${result.error.info?.code}: ${result.error.message}`);
  return result.value as { logs: string[]; result?: unknown };
}

/** The text content of a result. */
export function textOf(result: ToolExecutionResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
}

/** A promise with its resolve, for tools that wait on the test. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves once `condition()` holds, checking after each turn of the event loop. */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
