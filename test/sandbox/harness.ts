/**
 * A tiny fake host for sandbox tests: the runtime under test, limits and a
 * `callTool` backed by plain functions. Mocks only the outside edge.
 */
import type { SandboxCallOutcome, SandboxLimits, SandboxRunOutcome, SandboxRuntime } from '../../src/sandbox-runtime.ts';
import { createTestRuntime } from '../helpers/runtimes.ts';
import type { JsonValue } from '../../src/json.ts';

export type FakeTool = (args: unknown) => unknown;

export interface FakeHost {
  runtime: SandboxRuntime;
  /** Every call the host received, in order: name and parsed arguments. */
  calls: { name: string; args: unknown }[];
  /**
   * Runs `code`. Every run of one host belongs to one session unless `sessionId` says otherwise
   * (null: none), so the conformance suite also runs programs in isolates an earlier test's
   * program had used (see sandbox/session-isolates.ts).
   */
  run(
    code: string,
    options?: { tools?: Record<string, FakeTool>; limits?: Partial<SandboxLimits>; signal?: AbortSignal; onLog?(line: string): void; sessionId?: string | null },
  ): Promise<SandboxRunOutcome>;
  close(): Promise<void>;
}

const HARNESS_SESSION = 'conformance';

export const testLimits: SandboxLimits = { timeoutMs: 5_000, memoryMiB: 32, maxLogBytes: 64 * 1024, maxResultBytes: 1024 * 1024, maxArgBytes: 1024 * 1024 };

/** A host on `runtime`; by default the runtime this worker tests (`PTC_TEST_RUNTIME`), its warm isolates sized for {@link testLimits}. */
export function createFakeHost(runtime: SandboxRuntime = createTestRuntime(undefined, { warmPoolMemoryMiB: testLimits.memoryMiB })): FakeHost {
  const calls: { name: string; args: unknown }[] = [];
  let seq = 0;
  return {
    runtime,
    calls,
    run(code, options = {}) {
      const tools = options.tools ?? {};
      const sessionId = options.sessionId === undefined ? HARNESS_SESSION : options.sessionId;
      return runtime.run({
        code,
        toolNames: Object.keys(tools),
        ...(sessionId === null ? {} : { sessionId }),
        async callTool(name, argsJson): Promise<SandboxCallOutcome> {
          const args: unknown = JSON.parse(argsJson);
          calls.push({ name, args });
          const callId = `run:ptc:${++seq}`;
          try {
            const value = await Object.getOwnPropertyDescriptor(tools, name)?.value(args);
            return { ok: true, value: value as JsonValue };
          } catch (error) {
            const fatal = (error as { fatal?: SandboxCallOutcome }).fatal;
            if (fatal !== undefined) return fatal;
            return { ok: false, error: { code: 'TOOL_FAILED', message: (error as Error).message, callId } };
          }
        },
        limits: { ...testLimits, ...options.limits },
        signal: options.signal ?? new AbortController().signal,
        ...(options.onLog === undefined ? {} : { onLog: options.onLog }),
      });
    },
    close: () => runtime.close(),
  };
}

/** The parsed result of a successful run; fails the test otherwise. */
export function resultOf(outcome: SandboxRunOutcome): unknown {
  if (!outcome.ok) throw new Error(`run failed: ${outcome.failure.kind}: ${outcome.failure.message}`);
  return outcome.resultJson === undefined ? undefined : JSON.parse(outcome.resultJson);
}

/** The failure of a run; fails the test if it succeeded. */
export function failureOf(outcome: SandboxRunOutcome) {
  if (outcome.ok) throw new Error(`run succeeded with ${outcome.resultJson}`);
  return outcome.failure;
}
