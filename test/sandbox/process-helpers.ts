// Shared parts of the process-runtime tests: requests, gates, pid checks.
import { readFileSync } from 'node:fs';
import type {
  SandboxCallOutcome,
  SandboxLimits,
  SandboxRunOutcome,
  SandboxRunRequest,
} from '../../src/sandbox-runtime.ts';
import { createProcessRuntime, type ProcessRuntime, type ProcessRuntimeOptions } from '../../sandbox/process/process-runtime.ts';
import type { JsonValue } from '../../src/json.ts';

export const limits: SandboxLimits = { timeoutMs: 10_000, memoryMiB: 128, maxLogBytes: 1 << 20, maxResultBytes: 1 << 20, maxArgBytes: 4 << 20 };

/** Children host the real in-process runtime (isolated-vm). */
export function processRuntime(options: ProcessRuntimeOptions = {}): ProcessRuntime {
  return createProcessRuntime(options);
}

export function request(code: string, overrides: Partial<SandboxRunRequest> = {}): SandboxRunRequest {
  return {
    code,
    toolNames: ['wait'],
    callTool: async (_name, argsJson) => ({ ok: true, value: JSON.parse(argsJson) as JsonValue }),
    limits,
    signal: new AbortController().signal,
    ...overrides,
  };
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** A tool whose calls park until `release`; `called` resolves at the first call. */
export function gatedTool(): {
  callTool: SandboxRunRequest['callTool'];
  called: Promise<void>;
  release(outcome: SandboxCallOutcome): void;
} {
  const called = deferred<void>();
  const gate = deferred<SandboxCallOutcome>();
  return {
    callTool: () => {
      called.resolve();
      return gate.promise;
    },
    called: called.promise,
    release: gate.resolve,
  };
}

/**
 * Starts a run that parks in its first tool call (`await tools.wait({})`);
 * resolves once that call reached the parent, with the run and its gate.
 */
export async function parkedRun(
  runtime: ProcessRuntime,
  overrides: Partial<SandboxRunRequest> = {},
): Promise<{ pending: Promise<SandboxRunOutcome>; tool: ReturnType<typeof gatedTool> }> {
  const tool = gatedTool();
  const pending = runtime.run(request('await tools.wait({})\nreturn 1', { callTool: tool.callTool, ...overrides }));
  await tool.called;
  return { pending, tool };
}

/** True when no such process exists (or only its zombie does). */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false;
  } catch {
    return true;
  }
}
