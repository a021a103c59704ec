/**
 * The sandbox boundary, types only. `src/` declares it; `sandbox/` implements
 * it (in-process isolates, or isolates in a pool of child processes). Arguments
 * cross it as JSON text, values as frozen JSON values: how a value reaches the
 * program (whole, or in parts) is the runtime's business.
 */

import type { JsonValue } from './json.ts';

export type SandboxFailureKind =
  | 'syntax'
  | 'typecheck'
  | 'exception'
  | 'timeout'
  | 'abort'
  | 'memory'
  | 'output-limit'
  | 'call-limit'
  | 'invalid-output'
  | 'crashed'
  | 'busy'
  | 'replay-divergence';

/**
 * What a run refused `busy` lacked: a compute slot (`pool.maxActiveRuns`
 * held by runs computing), memory headroom, room in the wait queue, or a
 * runtime at all (still starting, or closed).
 */
export type BusyCause = 'compute' | 'memory' | 'queue-full' | 'starting' | 'closed';

export interface SandboxFailure {
  kind: SandboxFailureKind;
  /** For `busy`: what the run lacked. */
  busy?: BusyCause;
  /** One line, with the model's `agent.ts:LINE:COL` where known. */
  message: string;
  /** The model's own stack frames (`at … (agent.ts:3:7)`), host frames removed. */
  frames?: string[];
  /** 1-based position in the model's source, when known. */
  line?: number;
  column?: number;
  /**
   * For an uncaught `ToolCallError`: the callId it carries, as the program
   * left it (a program can make its own ToolCallError, so the host checks it
   * against the calls it ran before trusting it).
   */
  callId?: string;
}

export interface SandboxLimits {
  /** Wall time including nested waits, ms. */
  timeoutMs: number;
  /** Isolate heap, MiB. */
  memoryMiB: number;
  /** Total bytes of captured logs; past it a truncation marker is logged and the rest dropped. */
  maxLogBytes: number;
  /** Bytes of the result's JSON text; past it the run fails `output-limit`. */
  maxResultBytes: number;
  /**
   * Bytes (UTF-8) of one nested call's argument JSON. The guest refuses a call whose JSON has more
   * characters than this (`INVALID_ARGS`, never submitted); the exact byte check is the host's.
   */
  maxArgBytes: number;
}

/** What a nested call resolved to, as the stub will see it. */
export type SandboxCallOutcome =
  /** The value, frozen lossless JSON (a snapshot the tool can no longer change). */
  | {
      ok: true;
      value: JsonValue;
      /** Called by the sandbox with the UTF-8 bytes of JSON the program received for it, however the sandbox carried it. */
      onDelivered?(bytes: number): void;
    }
  | { ok: false; error: { code: string; message: string; callId: string } }
  /** Ends the whole run with this failure (e.g. `call-limit`). */
  | { ok: false; fatal: { kind: SandboxFailureKind; message: string } };

export interface SandboxRunRequest {
  /** The program as the model wrote it (TypeScript allowed; the runtime strips types). */
  code: string;
  /** Names shown in frames, default `agent.ts`. */
  filename?: string;
  /** One stub per name under `tools`. */
  toolNames: readonly string[];
  /**
   * The session the run belongs to, when its caller named one. A runtime may let the runs of one
   * session share an isolate, one after another, each in a fresh context (never runs of different
   * sessions); a run without a session gets an isolate of its own.
   */
  sessionId?: string;
  /**
   * The host side of a stub. Called in submission order with the argument
   * object's JSON text (already checked lossless inside the isolate). With
   * `recordReads`, `readsJson` is the JSON array of the values the program
   * read since its previous call (absent when it read none).
   */
  callTool(name: string, argsJson: string, readsJson?: string): Promise<SandboxCallOutcome>;
  /**
   * Record the program's nondeterministic reads (`Date.now()`, `new Date()` and `Date()` without
   * arguments, `Math.random()`: the guest offers no `performance` and no `crypto`) and hand them to
   * `callTool` with each call. The program first reads `replay`, in order, then live values: a run
   * resumed by replay sees the values the paused run saw. Absent: nothing is recorded.
   */
  recordReads?: { replay: readonly number[] };
  limits: SandboxLimits;
  signal: AbortSignal;
  /** Each console line as it is logged (after formatting). */
  onLog?(line: string): void;
  /**
   * Called once, when the program starts running: its `limits.timeoutMs`
   * counts from here. A run that waits for headroom or an isolate first is
   * not yet started; one that never starts never calls it.
   */
  onStart?(): void;
}

/**
 * How much of its limits a run used, as the runtime measured it. Optional throughout: a runtime
 * that cannot measure a figure leaves it out (and another runtime may report none at all).
 */
export interface SandboxUsage {
  /** Bytes of log lines counted against `maxLogBytes` (UTF-8, a newline each). */
  logBytes?: number;
  /** Bytes of the returned value's JSON, also when it was over `maxResultBytes`. */
  resultBytes?: number;
  /**
   * The isolate's heap when the program ended: the heap V8 had committed, which grows to the
   * run's high point and is seldom given back within a run. Absent when the run ended with its
   * isolate disposed (timeout, memory, cancellation, a limit) or never started.
   */
  heapPeakBytes?: number;
  /** The heap V8 lets the isolate reach (`memoryMiB` and its young generation), bytes; with `heapPeakBytes`. */
  heapLimitBytes?: number;
}

export type SandboxRunOutcome =
  | { ok: true; logs: string[]; /** absent when the program returned undefined */ resultJson?: string; usage?: SandboxUsage }
  | { ok: false; logs: string[]; failure: SandboxFailure; usage?: SandboxUsage };

export interface SandboxPoolStatus {
  /** Sandbox children ready: the process runtime's child processes, the in-process runtime's burst threads (0 until a burst or `ready()` starts them). */
  children: number;
  /** Runs admitted and not yet ended. */
  busy: number;
  /** Runs waiting for memory headroom. */
  queued: number;
  /** Sandbox children replaced since start. */
  restarts: number;
  /** Runs admitted since start. The fields below are optional so that other runtimes need not budget. */
  admitted?: number;
  /** Runs refused `busy` since start: the queue was full, or their wait timed out. */
  refused?: number;
  /** Runs failed `memory` by the budget since start (their runtime ran short, and they had grown most). */
  memoryStopped?: number;
  /** Memory the runs may hold together, bytes. */
  memoryBudgetBytes?: number;
  /** Memory charged to the runs now: each run's reservation or its isolate's measured size, whichever is larger. */
  memoryUsedBytes?: number;
  /** True while a new run would wait: no headroom for one more run, or runs already queued. */
  saturated?: boolean;
  /** While saturated: what a new run would wait for, a compute slot or memory headroom. */
  saturatedBy?: 'compute' | 'memory';
  /** Runs since start that took an isolate an earlier run of their session had used (in a fresh context). */
  isolatesReused?: number;
  /** Heap pages in RAM of the isolates kept for sessions' next runs, bytes: memory held beside the runs' budget. */
  keptIsolateBytes?: number;
}

export interface SandboxRuntime {
  readonly kind: 'in-process' | 'process' | (string & {});
  /** Never rejects: every failure is an outcome. */
  run(request: SandboxRunRequest): Promise<SandboxRunOutcome>;
  /**
   * Ready to take runs. The built-in runtimes: warm pool filled, children or burst threads up, each
   * warmed by one trivial program; in-process, also no ended run's isolate still being recycled.
   */
  ready(): Promise<void>;
  status(): SandboxPoolStatus;
  close(): Promise<void>;
}
