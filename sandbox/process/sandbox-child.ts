/**
 * One supervised sandbox child (a process, or a thread: transport.ts):
 * starts it, relays its runs' nested calls and logs to the callers, watches
 * heartbeats, memory and deadlines, and kills it when any of them says it
 * can no longer be trusted to end its runs.
 */
import type { SandboxFailure, SandboxRunOutcome } from '../../src/sandbox-runtime.ts';
import type { CallReply } from '../crossing/protocol.ts';
import type { IsolateRunRequest } from '../isolate-run.ts';
import { MiB } from '../memory-budget.ts';
import { CHILD_ADMIT_AHEAD } from '../tuning.ts';
import { activeRunsPerChild, childBudgetMiB, type ResolvedProcessRuntimeOptions } from './options.ts';
import { isChildMessage, Outbox, toWire, unbatch, type ChildBudgetReport, type ChildMessage, type ParentMessage, type WireCallOutcome } from './protocol.ts';
import { startChild, type ChildTransport } from './transport.ts';

export interface SandboxChildEvents {
  onReady(child: SandboxChild): void;
  /** The process is gone; `reason` says why, for the startup error. */
  onExit(child: SandboxChild, reason: string): void;
  /** Headroom may have freed: a run ended, or began waiting on a nested call. */
  onRunEnd(child: SandboxChild): void;
  /** The child takes no more runs and dies when its last run ends: replace it now. */
  onRetire(child: SandboxChild): void;
}

interface InFlightRun {
  request: IsolateRunRequest;
  /** Nested calls relayed and not yet answered: while any is, the run waits and computes nothing. */
  callsInFlight: number;
  /** Every line relayed so far, in order: the run's logs (`done` carries none), kept when its process dies. */
  logs: string[];
  resolve(outcome: SandboxRunOutcome): void;
  /** Whether the child has started the program (`started`): the deadline below counts from then. */
  started?: boolean;
  deadline: NodeJS.Timeout;
  abortGrace?: NodeJS.Timeout;
  onAbort(): void;
}

let nextRunId = 1;

// The child hosts hostile programs: its figures are used only when they are plain numbers.
function isReport(value: unknown): value is ChildBudgetReport {
  if (typeof value !== 'object' || value === null) return false;
  const { usedBytes, runs, stopped, reused, keptBytes } = value as Record<string, unknown>;
  return [usedBytes, runs, stopped, reused, keptBytes].every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0);
}
// The host disposed the isolate, but a builtin looping in C++ (such as
// `new Array(2e8).fill(0)`) may keep running on its thread, burning CPU and
// memory: only the process's death ends it for sure.
const retiringKinds: ReadonlySet<SandboxFailure['kind']> = new Set(['timeout', 'memory', 'crashed']);
// Loading isolated-vm and warming isolates blocks a new child for a while.
const startupTimeoutMs = 30_000;

export class SandboxChild {
  readonly #options: ResolvedProcessRuntimeOptions;
  readonly #events: SandboxChildEvents;
  readonly #child: ChildTransport;
  /** What messages call the child: `the sandbox process` or `the sandbox thread`. */
  readonly #noun: string;
  readonly #runs = new Map<number, InFlightRun>();
  /** What this turn sends to the child, written as one message at the end of the turn. */
  readonly #outbox = new Outbox<ParentMessage>((message) => this.#child.send(message));
  /** Runs in `#runs` with a nested call in flight: kept as a count, `hasRoom` is asked on every call and every end. */
  #waitingRuns = 0;
  readonly #heartbeat: NodeJS.Timeout;
  #state: 'starting' | 'ready' | 'retiring' | 'dead' = 'starting';
  /**
   * When the oldest ping the child has not answered (by any message since)
   * was sent; undefined when none is outstanding. Silence is judged from the
   * pings actually sent: after a stall of this process, which sent none, the
   * child's quiet is no evidence.
   */
  #unansweredSince: number | undefined;
  #pingSeq = 0;
  #runsServed = 0;
  #startupError = '';
  /** The child's last budget report (its runs' measured growth reaches the parent with each heartbeat). */
  #report: ChildBudgetReport = { usedBytes: 0, runs: 0, stopped: 0, reused: 0, keptBytes: 0 };
  readonly #budgetBytes: number;
  readonly #reserveBytes: number;
  readonly exited: Promise<void>;

  constructor(options: ResolvedProcessRuntimeOptions, events: SandboxChildEvents) {
    this.#options = options;
    this.#events = events;
    this.#budgetBytes = childBudgetMiB(options) * MiB;
    this.#reserveBytes = options.runReserveMiB * MiB;
    this.#noun = `the sandbox ${options.transport}`;
    let exited!: () => void;
    this.exited = new Promise((resolve) => (exited = resolve));
    this.#child = startChild(options.transport, options.execArgv, {
      message: (received) => {
        for (const message of unbatch(received)) if (isChildMessage(message)) this.#onMessage(message);
      },
      exit: (reason) => {
        this.#onExit(reason);
        exited();
      },
      broken: () => this.kill(`${this.#noun} stopped taking messages (IPC error) during the run; run it again`),
    });
    this.#heartbeat = setInterval(() => this.#checkHeartbeat(), options.heartbeatIntervalMs);
    this.#heartbeat.unref();
    this.#send({
      type: 'init',
      runtimeModule: options.runtimeModule,
      runtimeOptions: {
        ...(options.warmPoolSize === undefined ? {} : { warmPoolSize: options.warmPoolSize }),
        ...(options.warmPoolMemoryMiB === undefined ? {} : { warmPoolMemoryMiB: options.warmPoolMemoryMiB }),
        ...(options.sessionIsolates === undefined ? {} : { sessionIsolates: options.sessionIsolates }),
        ...(options.sessionIsolateIdleMs === undefined ? {} : { sessionIsolateIdleMs: options.sessionIsolateIdleMs }),
        memoryBudgetMiB: childBudgetMiB(options),
        runReserveMiB: options.runReserveMiB,
        // The parent admits: a run waits in the child only while the parent's figures lag the child's.
        maxActiveRuns: activeRunsPerChild(options),
        queueLimit: 1_000_000,
        queueTimeoutMs: options.queueTimeoutMs,
        // The deadline below assumes a run waits here at most queueTimeoutMs.
        queueTimeoutFromArrival: true,
      },
    });
  }

  /** The process id, or the thread id of a thread child. */
  get pid(): number {
    return this.#child.id;
  }
  get ready(): boolean {
    return this.#state === 'ready';
  }
  get runs(): number {
    return this.#runs.size;
  }
  /** Runs that may be computing: in flight and not waiting on a nested call. */
  get activeRuns(): number {
    return this.#runs.size - this.#waitingRuns;
  }
  /**
   * Budget charged to this child: a reservation per run in flight, plus the
   * growth past their reservations that the child last reported.
   */
  get chargedBytes(): number {
    return this.#runs.size * this.#reserveBytes + this.grownBytes;
  }
  /** What this child's runs grew past their reservations, as last reported. */
  get grownBytes(): number {
    const { usedBytes, runs } = this.#report;
    return Math.max(0, usedBytes - runs * this.#reserveBytes);
  }
  /** Runs this child's budget stopped (`memory`), as last reported. */
  get memoryStopped(): number {
    return this.#report.stopped;
  }
  /** The isolates this child keeps for sessions, bytes, as last reported. */
  get keptIsolateBytes(): number {
    return this.#report.keptBytes;
  }

  /** Runs of this child that reused an isolate of their session, as last reported. */
  get isolatesReused(): number {
    return this.#report.reused;
  }
  get hasRoom(): boolean {
    return this.shortage === undefined;
  }

  /** What keeps this child from taking one more run: undefined when nothing does. */
  get shortage(): 'compute' | 'memory' | 'not-ready' | undefined {
    if (this.#state !== 'ready') return 'not-ready';
    // The cap on runs held is an admission cap, as the memory budget is: no compute slot would help.
    if (this.#runs.size >= this.#options.runsPerChild) return 'memory';
    const memory = this.#runs.size === 0 || this.chargedBytes + this.#reserveBytes <= this.#budgetBytes;
    if (!memory) return 'memory';
    // A few times the child's own gate: the parent learns that a run waits one IPC hop late, so the child
    // keeps a few runs queued locally and starts each the moment another begins to wait.
    if (this.activeRuns >= CHILD_ADMIT_AHEAD * activeRunsPerChild(this.#options)) return 'compute';
    return undefined;
  }

  /** Registers the run synchronously; the promise never rejects. */
  run(request: IsolateRunRequest): Promise<SandboxRunOutcome> {
    const runId = nextRunId++;
    return new Promise((resolve) => {
      const { limits, signal } = request;
      const run: InFlightRun = {
        request,
        callsInFlight: 0,
        logs: [],
        resolve,
        // Until the child says the program started, the run may wait there for headroom (at most
        // queueTimeoutMs, then it fails busy) or for an isolate: that wait is no reason to kill.
        // Each program the child starts restarts this clock (#started): only a child that stopped
        // starting programs is killed, not one that works through a burst on a loaded machine.
        deadline: setTimeout(
          () =>
            this.kill(`${this.#noun} was replaced because it stopped starting programs; run it again`, {
              runId,
              failure: { kind: 'crashed', message: `${this.#noun} did not start the program in time and was replaced; run it again` },
            }),
          this.#options.queueTimeoutMs + limits.timeoutMs + this.#options.killGraceMs,
        ),
        onAbort: () => this.#abort(runId),
      };
      this.#runs.set(runId, run);
      this.#child.hold(true);
      signal.addEventListener('abort', run.onAbort, { once: true });
      this.#send({
        type: 'run',
        runId,
        code: request.code,
        ...(request.filename === undefined ? {} : { filename: request.filename }),
        ...(request.sessionId === undefined ? {} : { sessionId: request.sessionId }),
        toolNames: [...request.toolNames],
        limits: { ...limits },
        ...(request.recordReads === undefined ? {} : { recordReads: { replay: [...request.recordReads.replay] } }),
      });
      if (signal.aborted) this.#abort(runId);
    });
  }

  /**
   * SIGKILL now. Every in-flight run fails `crashed` with `message`, except
   * `culprit`, which gets its own failure.
   */
  kill(message: string, culprit?: { runId: number; failure: SandboxFailure }): void {
    if (this.#state === 'dead') return;
    this.#state = 'dead';
    this.#child.kill();
    this.#failAll(message, culprit);
  }

  /**
   * Asks the child to leave (it cancels its runs and disposes its isolates
   * first), then kills it after the grace; resolves when it is gone.
   */
  async terminate(message: string): Promise<void> {
    if (this.#state !== 'dead') {
      this.#state = 'dead';
      this.#failAll(message);
      // What this turn queued goes first, as it would have unbatched.
      this.#outbox.flush();
      this.#child.close();
    }
    // Waited for: an idle child is unref'd, and a close awaiting its exit must keep the loop alive.
    this.#child.hold(true);
    const grace = setTimeout(() => this.#child.kill(), this.#options.killGraceMs);
    await this.exited;
    clearTimeout(grace);
  }

  #onMessage(message: ChildMessage): void {
    this.#unansweredSince = undefined;
    switch (message.type) {
      case 'ready':
        if (this.#state !== 'starting') return;
        this.#state = 'ready';
        this.#child.hold(false);
        this.#events.onReady(this);
        return;
      case 'init-failed':
        this.#startupError = message.message;
        return;
      case 'pong':
        if (isReport(message.budget)) this.#report = message.budget;
        if (this.#state === 'ready' && this.#child.kind === 'process' && message.rssBytes > this.#options.rssLimitMiB * 1024 * 1024) {
          this.kill(
            `${this.#noun} passed its memory ceiling (${this.#options.rssLimitMiB} MiB) during the run and was replaced; run it again`,
          );
        }
        return;
      case 'call':
        this.#relayCall(message.runId, message.callSeq, message.name, message.argsJson, typeof message.readsJson === 'string' ? message.readsJson : undefined);
        return;
      case 'log': {
        const run = this.#runs.get(message.runId);
        if (!run || typeof message.line !== 'string') return;
        run.logs.push(message.line);
        run.request.onLog?.(message.line);
        return;
      }
      case 'started':
        this.#started(message.runId);
        return;
      case 'done': {
        const run = this.#runs.get(message.runId);
        if (run) this.#finish(message.runId, { ...message.outcome, logs: run.logs } as SandboxRunOutcome);
        return;
      }
    }
  }

  /** The program started in the child: from now on it has its deadline, then the grace, before the child is killed; the caller hears of it (`onStart`). */
  #started(runId: number): void {
    const run = this.#runs.get(runId);
    if (!run || run.started) return;
    run.started = true;
    clearTimeout(run.deadline);
    for (const waiting of this.#runs.values()) if (!waiting.started) waiting.deadline.refresh();
    const { timeoutMs } = run.request.limits;
    run.deadline = setTimeout(
      () =>
        this.kill(`${this.#noun} was killed because another program in it did not stop at its deadline; run it again`, {
          runId,
          failure: { kind: 'timeout', message: `the program did not stop at its ${timeoutMs} ms deadline; its sandbox ${this.#options.transport} was killed` },
        }),
      timeoutMs + this.#options.killGraceMs,
    );
    try {
      run.request.onStart?.();
    } catch {
      // the caller's notice; the run goes on without it
    }
  }

  #relayCall(runId: number, callSeq: number, name: string, argsJson: string, readsJson: string | undefined): void {
    const run = this.#runs.get(runId);
    if (!run) return;
    if (run.abortGrace) {
      this.#send({ type: 'call-result', runId, callSeq, outcome: { ok: false, fatal: { kind: 'abort', message: 'the run was aborted' } } });
      return;
    }
    // The run now waits: its CPU share is free for another run.
    run.callsInFlight++;
    if (run.callsInFlight === 1) {
      this.#waitingRuns++;
      this.#events.onRunEnd(this);
    }
    const answered = () => {
      run.callsInFlight--;
      // A finished run left the count when it ended.
      if (run.callsInFlight === 0 && this.#runs.get(runId) === run) this.#waitingRuns--;
    };
    let pending: Promise<CallReply>;
    try {
      pending = run.request.callTool(name, argsJson, readsJson);
    } catch (error) {
      pending = Promise.reject(error);
    }
    // The caller's promise always settles; once the run or the child is gone,
    // its result has nowhere to go and is dropped.
    pending.then(
      (outcome) => {
        answered();
        if (this.#runs.get(runId) === run) this.#send({ type: 'call-result', runId, callSeq, outcome: toWire(outcome) });
      },
      () => {
        answered();
        if (this.#runs.get(runId) !== run) return;
        const outcome: WireCallOutcome = {
          ok: false,
          fatal: { kind: 'crashed', message: 'the host failed to relay a nested call; run it again' },
        };
        this.#send({ type: 'call-result', runId, callSeq, outcome });
      },
    );
  }

  #abort(runId: number): void {
    const run = this.#runs.get(runId);
    if (!run || run.abortGrace) return;
    this.#send({ type: 'abort', runId });
    run.abortGrace = setTimeout(
      () =>
        this.kill(`${this.#noun} was killed because another program in it did not stop when aborted; run it again`, {
          runId,
          failure: { kind: 'abort', message: 'the run was aborted' },
        }),
      this.#options.killGraceMs,
    );
  }

  #finish(runId: number, outcome: SandboxRunOutcome): void {
    const run = this.#runs.get(runId);
    if (!run) return;
    this.#runs.delete(runId);
    if (run.callsInFlight > 0) this.#waitingRuns--;
    clearTimeout(run.deadline);
    clearTimeout(run.abortGrace);
    run.request.signal.removeEventListener('abort', run.onAbort);
    if (this.#runs.size === 0 && this.#state === 'ready') this.#child.hold(false);
    run.resolve(outcome);
    if (this.#state === 'dead') return;
    this.#runsServed++;
    const { recycleAfterRuns } = this.#options;
    // Only a process's death ends a runaway isolate or frees the native memory isolate churn leaves: a thread is kept.
    if (this.#child.kind !== 'process') {
      this.#events.onRunEnd(this);
      return;
    }
    if ((!outcome.ok && retiringKinds.has(outcome.failure.kind)) || (recycleAfterRuns > 0 && this.#runsServed >= recycleAfterRuns)) {
      this.#retire();
    }
    if (this.#state === 'retiring' && this.#runs.size === 0) {
      this.kill(`${this.#noun} was retired during the run; run it again`);
      return;
    }
    this.#events.onRunEnd(this);
  }

  #retire(): void {
    if (this.#state !== 'ready') return;
    this.#state = 'retiring';
    this.#events.onRetire(this);
  }

  #failAll(message: string, culprit?: { runId: number; failure: SandboxFailure }): void {
    for (const [runId, run] of [...this.#runs]) {
      const failure = culprit?.runId === runId ? culprit.failure : { kind: 'crashed' as const, message };
      this.#finish(runId, { ok: false, logs: run.logs, failure });
    }
  }

  #checkHeartbeat(): void {
    if (this.#state === 'dead') return;
    if (this.#overdue()) {
      // Timers run before I/O: after a stall of this process, the child's
      // answer may be waiting unread. Judge once it has been read.
      setImmediate(() => {
        if (this.#state !== 'dead' && this.#overdue()) {
          this.kill(`${this.#noun} stopped answering during the run and was replaced; run it again`);
        }
      });
    }
    this.#unansweredSince ??= Date.now();
    this.#send({ type: 'ping', seq: this.#pingSeq++ });
  }

  #overdue(): boolean {
    const { heartbeatTimeoutMs } = this.#options;
    const timeoutMs = this.#state === 'starting' ? Math.max(startupTimeoutMs, heartbeatTimeoutMs) : heartbeatTimeoutMs;
    return this.#unansweredSince !== undefined && Date.now() - this.#unansweredSince > timeoutMs;
  }

  #onExit(reason: string): void {
    clearInterval(this.#heartbeat);
    const wasDead = this.#state === 'dead';
    this.#state = 'dead';
    if (!wasDead) this.#failAll(`${this.#noun} died (${reason}) during the run; run it again`);
    this.#events.onExit(this, this.#startupError || reason);
  }

  #send(message: ParentMessage): void {
    this.#outbox.send(message);
  }
}
