/**
 * The composition root: the one place that picks a sandbox runtime, builds
 * the typings service and creates Code Mode from them. The library facade
 * (`createCodeMode` in the `ptc-executor` entry) and the service
 * (services/core.ts) both come through here, so they cannot drift apart.
 */
import { createCodeModeCore, type CodeMode, type CodeModeCoreOptions, type CodeModeKind } from '../src/code-mode/code-mode.ts';
import { RUNTIME_KINDS, type RuntimeKind } from '../src/code-mode/choices.ts';
import { DEFAULT_CODE_MODE_LIMITS, type CodeModeLimits } from '../src/code-mode/limits.ts';
import type { TypecheckMode } from '../src/code-mode/run-code-tool.ts';
import type { TypingsService } from '../src/code-mode/typings-service.ts';
import type { SandboxRuntime } from '../src/sandbox-runtime.ts';
import type { ToolRegistry } from '../src/tool.ts';
import type { InProcessRuntimeOptions } from '../sandbox/in-process-runtime.ts';
import type { ProcessRuntimeOptions } from '../sandbox/process/options.ts';
import type { TypecheckPoolOptions } from '../typings/typecheck-pool.ts';
import { createTypingsService } from '../typings/service.ts';
import { lazyRuntime, type LazyRuntime } from './lazy-runtime.ts';
import { assertSandboxSupported } from './runtime-support.ts';

/** The sandbox pool's settings (heap size comes from `limits.memoryMiB`): the `process` runtime's, and the in-process runtime's burst threads. */
export type ProcessPoolOptions = Omit<ProcessRuntimeOptions, 'warmPoolMemoryMiB'> & Pick<InProcessRuntimeOptions, 'burstThreads'>;

export interface CodeModeOptions {
  /** Code Mode registers `run_code` on it at once (and removes it on `close()`). */
  registry: ToolRegistry;
  /**
   * Where programs run. Default `'in-process'` (isolates in this process, with
   * a warm pool). `'process'`: isolates in a supervised pool of child
   * processes (tune it with `pool`), so a V8 abort costs one run, never this
   * process. The runtime made here loads on the first run (or `ready()`) and
   * is closed by `close()`; a `SandboxRuntime` you pass stays yours to close.
   */
  runtime?: RuntimeKind | SandboxRuntime;
  /**
   * The sandbox pool: memory budget, queue and (for `'process'`) children and recycling; see the
   * service's `pool` config, and `DEFAULT_POOL` and `DEFAULT_PROCESS_POOL` for the defaults. The
   * in-process runtime takes `memoryBudgetMiB`, `runReserveMiB`, `maxActiveRuns`, `queueLimit`,
   * `queueTimeoutMs`, `burstThreads`, `sessionIsolates` and `sessionIsolateIdleMs` of it.
   */
  pool?: ProcessPoolOptions;
  /** The type-checker's worker threads and budgets (when `typecheck` is not `'off'`); see `TypecheckPoolOptions`. */
  typechecker?: TypecheckPoolOptions;
  /** Keep warm isolates ready (default true). False for a host that never runs programs (printing typings). */
  warm?: boolean;
  /** Per-run limits; see {@link CodeModeLimits} for each default. The prompt states these same limits. */
  limits?: Partial<CodeModeLimits>;
  /** `'code'` (default), `'native'` or `'both'`; see `createCodeModeCore`. */
  mode?: CodeModeKind;
  /** `'off'` (default), `'warn'` or `'enforce'`: type-check programs against the tool typings first. */
  typecheck?: TypecheckMode;
  /** Default: the built-in typings generator. */
  typings?: TypingsService;
  /** Every console line of every run as it is logged. */
  onLog?(line: string, call: { callId: string; sessionId: string }): void;
  /** Tools whose calls need approval besides those whose definitions say so, by glob; see `createCodeModeCore`. */
  approvals?: CodeModeCoreOptions['approvals'];
  /** Where paused runs wait for a decision (default in memory); `createFileJournalStore(dir)` keeps them across restarts. */
  journal?: CodeModeCoreOptions['journal'];
  /** How long a paused run waits for a decision, ms. Default `DEFAULT_APPROVAL_TTL_MS`. */
  approvalTtlMs?: number;
  /** How long a paused run's record is kept once it expired or its resumed run ended (it can be rolled back until then), ms. Default `DEFAULT_JOURNAL_RETENTION_MS`. */
  journalRetentionMs?: number;
  /** The clock paused runs are timed by (epoch ms). Default `Date.now`. */
  now?(): number;
  /** Asks a person about a gated call while its run waits, before pausing it; see `createCodeModeCore`. */
  approveInPlace?: CodeModeCoreOptions['approveInPlace'];
}

/** Code Mode with its sandbox runtime: `runtime` is the one it runs programs in (its pool status, its readiness). */
export interface ComposedCodeMode extends CodeMode {
  readonly runtime: SandboxRuntime;
  /** Ready to run programs: the sandbox is loaded and its warm pool filled. */
  ready(): Promise<void>;
  /** Loads the sandbox and creates its runtime (the pool starts filling) without waiting for the pool. */
  start(): Promise<void>;
}

/**
 * Code Mode with defaults. Creating it registers `run_code` on the registry
 * and (in `'code'` mode) restricts the other tools to programs; `close()`
 * undoes both and closes a runtime it made. On a Node release or platform the
 * sandbox cannot run on, it throws `UnsupportedRuntimeError` (a host that
 * never runs programs, `warm: false`, is not checked).
 */
export function createCodeMode(options: CodeModeOptions): ComposedCodeMode {
  const choice = options.runtime ?? 'in-process';
  const owned = typeof choice === 'string';
  if (owned && options.warm !== false) {
    assertSandboxSupported();
    // Process-runtime children get the flags from their parent; in-process isolates live in this process.
    if (choice === 'in-process') void import('../sandbox/host-flags.ts').then((flags) => flags.warnMissingHostFlags());
  }
  const lazy = owned ? createRuntime(choice, options) : undefined;
  const runtime = lazy ?? (choice as SandboxRuntime);
  // A typings service made here is closed by close() (its checker threads); one passed in stays the caller's.
  const ownTypings = options.typings === undefined ? createTypingsService(options.typechecker === undefined ? {} : { typecheck: options.typechecker }) : undefined;
  let core: CodeMode;
  try {
    core = createCodeModeCore({
      registry: options.registry,
      runtime,
      typings: options.typings ?? ownTypings!,
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(options.mode === undefined ? {} : { mode: options.mode }),
      ...(options.typecheck === undefined ? {} : { typecheck: options.typecheck }),
      ...(options.onLog === undefined ? {} : { onLog: options.onLog }),
      ...(options.approvals === undefined ? {} : { approvals: options.approvals }),
      ...(options.journal === undefined ? {} : { journal: options.journal }),
      ...(options.approvalTtlMs === undefined ? {} : { approvalTtlMs: options.approvalTtlMs }),
      ...(options.journalRetentionMs === undefined ? {} : { journalRetentionMs: options.journalRetentionMs }),
      ...(options.now === undefined ? {} : { now: options.now }),
      ...(options.approveInPlace === undefined ? {} : { approveInPlace: options.approveInPlace }),
    });
  } catch (error) {
    if (owned) void runtime.close();
    void ownTypings?.close?.();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    runtime,
    ready: () => runtime.ready(),
    start: async () => lazy?.load(),
    limits: core.limits,
    typings: () => core.typings(),
    toolSchemas: () => core.toolSchemas(),
    prompt: () => core.prompt(),
    asTool: () => core.asTool(),
    pending: (callIdPrefix) => core.pending(callIdPrefix),
    decide: (callId, decision, call) => core.decide(callId, decision, call),
    rollback: (callId, rollbackOptions) => core.rollback(callId, rollbackOptions),
    durableStatus: (callId) => core.durableStatus(callId),
    watchStats: (callId, listener) => core.watchStats(callId, listener),
    close() {
      closing ??= (async () => {
        await core.close();
        await ownTypings?.close?.();
        if (owned) await runtime.close();
      })();
      return closing;
    },
  };
}

function createRuntime(choice: RuntimeKind, options: CodeModeOptions): LazyRuntime {
  if (!(RUNTIME_KINDS as readonly string[]).includes(choice)) {
    throw new TypeError(`runtime must be ${RUNTIME_KINDS.map((kind) => `'${kind}'`).join(', ')} or a SandboxRuntime (got ${String(choice)})`);
  }
  // Pooled isolates get the configured heap, or every run would make its own.
  const warmPoolMemoryMiB = options.limits?.memoryMiB ?? DEFAULT_CODE_MODE_LIMITS.memoryMiB;
  const warm = options.warm === false ? { warmPoolSize: 0 } : {};
  if (choice === 'process') {
    return lazyRuntime('process', async () => {
      const { createProcessRuntime } = await import('../sandbox/process/process-runtime.ts');
      const { burstThreads: _inProcessOnly, ...pool } = options.pool ?? {};
      return createProcessRuntime({ ...pool, ...warm, warmPoolMemoryMiB });
    });
  }
  return lazyRuntime('in-process', async () => {
    const { createInProcessRuntime } = await import('../sandbox/in-process-runtime.ts');
    const { memoryBudgetMiB, runReserveMiB, maxActiveRuns, queueLimit, queueTimeoutMs, burstThreads, sessionIsolates, sessionIsolateIdleMs } = options.pool ?? {};
    const picked = Object.fromEntries(
      Object.entries({ memoryBudgetMiB, runReserveMiB, maxActiveRuns, queueLimit, queueTimeoutMs, burstThreads, sessionIsolates, sessionIsolateIdleMs }).filter(
        ([, value]) => value !== undefined,
      ),
    );
    // A host that never runs programs starts no threads either.
    const idle = options.warm === false ? { burstThreads: 0 } : {};
    return createInProcessRuntime({ ...warm, ...picked, ...idle, warmPoolMemoryMiB });
  });
}
