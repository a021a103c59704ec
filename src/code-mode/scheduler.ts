/**
 * The host side of one run's tool stubs: numbering, limits, scheduling,
 * dispatch, events and cancellation.
 *
 * Scheduling: calls start strictly in submission order. A concurrency-safe
 * call starts while no exclusive call runs and fewer than `maxParallelCalls`
 * are in flight; an exclusive call (the default) waits for everything in
 * flight and runs alone; nothing submitted after a waiting call overtakes it.
 *
 * Commit order: the registry runs post-execute inside `dispatch`, so the
 * scheduler cannot reorder it from outside. Instead it names each overlapping
 * call's predecessor to the pipeline's commit-order step (src/commit-order.ts),
 * which holds the call, once its body has finished, until that predecessor
 * has fully settled. Post-execute hooks, the `tool/ptc-dispatch` events and
 * the delivery of results to the program therefore all follow submission
 * order, while the bodies themselves overlap.
 */
import type { EventSink, NewToolEvent } from '../events.ts';
import type { JsonValue } from '../json.ts';
import type { SandboxCallOutcome } from '../sandbox-runtime.ts';
import { orderCommits } from '../commit-order.ts';
import { endPhase, endUndelivered, nestedCallChannel, startPhase, traceCall, type NestedCallMessage } from '../tracing.ts';
import type { Agent, DispatchRequest, DispatchToken, HookContext, ToolExecutionResult, ToolRegistry } from '../tool.ts';
import type { ApprovalDecision, PendingCall } from './journal-store.ts';
import type { JournaledCall, RunJournalRecorder } from './journal.ts';
import { roundMs, type NestedCallStats } from './run-stats.ts';

export interface RunSchedulerOptions {
  registry: ToolRegistry;
  runCallId: string;
  rootCallId: string;
  sessionId: string;
  token: DispatchToken;
  agent?: Agent;
  /** Contexts post-execute hooks attached to a nested result, in commit order (they go on the run's own result). */
  onContexts?(contexts: HookContext[]): void;
  maxCalls: number;
  /** Bytes (UTF-8) of one call's argument JSON; a larger argument is refused with `INVALID_ARGS`. */
  maxArgBytes: number;
  maxParallelCalls: number;
  /**
   * The run's journal, when it may pause or resumes a paused run: calls are journaled, answered
   * from a resumed journal, and a call that needs approval pauses the run.
   */
  journal?: RunJournalRecorder;
  /** With `journal`: the host's clock (epoch ms) and the run's deadline on it; a gated call past it is denied `timeout`. */
  now?(): number;
  deadlineAt?: number;
  /**
   * With `journal`: asks a person about a gated call while the run waits (in-place-approval.ts).
   * A decision applies there and then; undefined (no one to ask) pauses the run as usual.
   */
  approveInPlace?(call: { callId: string; seq: number; toolName: string; args: JsonValue; signal: AbortSignal }): Promise<ApprovalDecision | undefined>;
}

interface Pending {
  callId: string;
  name: string;
  args: JsonValue;
  safe: boolean;
  resolve(outcome: SandboxCallOutcome): void;
  /** This call's dispatch (post-execute included) has settled. */
  done: boolean;
  /** Made only when a later call overlaps this one (a sequential program never needs it); opens when `done`. */
  gate?: Promise<void>;
  openGate?: () => void;
  /** The journal's plan for this call, in a journaled run. */
  journaled: JournaledCall | undefined;
  /** The call's `call` message, while a tracer listens (src/tracing.ts). */
  trace: NestedCallMessage | undefined;
  /** Its `queued` phase, open while it waits to start. */
  queued?: NestedCallMessage;
  /** When the program submitted it, and when it started (performance.now()). */
  submittedAt: number;
  startedAt: number;
}

/** Marks `pending` settled and opens its gate, if a later call made one. */
function markSettled(pending: Pending): void {
  pending.done = true;
  pending.openGate?.();
}

/** Closes the call's `queued` phase, if it is open. */
function leaveQueue(pending: Pending): void {
  if (pending.queued === undefined) return;
  endPhase(pending.queued);
  pending.queued = undefined;
}

/** Answers a call that never reaches dispatch (abandoned, or answered from the journal) and marks it settled. */
function settleWith(pending: Pending, outcome: SandboxCallOutcome): void {
  leaveQueue(pending);
  pending.resolve(outcome);
  markSettled(pending);
}

/** Resolves once `pending` has settled; the promise is made on first need. */
function waitFor(pending: Pending): Promise<void> {
  pending.gate ??= new Promise<void>((resolve) => (pending.openGate = resolve));
  return pending.gate;
}

export class RunScheduler {
  readonly #options: RunSchedulerOptions;
  readonly #controller = new AbortController();
  /** Waiting calls from `#head` on (an index, not shift(): a Promise.all burst queues thousands). */
  #queue: Pending[] = [];
  #head = 0;
  /** Started calls whose dispatch has not settled yet (a count, not a set of promises: nothing else reads them). */
  #inFlight = 0;
  /** Opens when `#inFlight` drops to 0; made only when `settled()` waits. */
  #idle: { promise: Promise<void>; resolve(): void } | undefined;
  readonly #appends: Promise<unknown>[] = [];
  #submitted = 0;
  #running = 0;
  #exclusiveRunning = false;
  #closed = false;
  /** The call started last. */
  #previous: Pending | undefined;
  readonly #gates = new Map<string, Pending>();
  /** callId → tool name of each nested call that failed (at most maxCalls entries). */
  readonly #failed = new Map<string, string>();
  /** Gated calls offered for a decision in place: being asked, or asked without an answer (they pause). */
  readonly #inPlace = new Map<JournaledCall, 'asking' | 'unanswered'>();
  /** Of those, how many are being asked now (their question is cancelled when the run ends). */
  #asking = 0;
  /** The call that needs approval, at the head of the queue: nothing after it starts. */
  #paused: Pending | undefined;
  /** The pause is complete: every call before it settled, and the run was told to end. */
  #pauseSent = false;
  /** Each dispatched call's times and bytes, in the order they settled. */
  readonly #stats: NestedCallStats[] = [];
  /** When this run's scheduler began: the calls' `startMs` count from here. */
  readonly #began = performance.now();
  /** The call being submitted: if it starts at once, it waited for nothing. */
  #submitting: Pending | undefined;
  /** While a tracer listens (made on its first call): the `call` messages of calls the program has not had the answer of yet. */
  #undelivered: Set<NestedCallMessage> | undefined;

  constructor(options: RunSchedulerOptions) {
    this.#options = options;
    orderCommits(options.token, { previous: this.#gates, settled: waitFor });
  }

  /** The sandbox's `callTool`: called in submission order with the argument JSON. */
  readonly callTool = (name: string, argsJson: string, readsJson?: string): Promise<SandboxCallOutcome> => {
    const o = this.#options;
    if (this.#closed) return Promise.resolve(aborted(name, ''));
    // Defence in depth: the guest already refuses an argument with more characters than the limit
    // (a lower bound of its bytes) before submitting it. An argument refused here, like one the guest
    // refused, takes no call number, does not count toward maxCalls, gets callId '' and writes no event.
    // UTF-8 needs at most 3 bytes per UTF-16 unit, so only a long argument is measured.
    if (argsJson.length * 3 > o.maxArgBytes) {
      const bytes = Buffer.byteLength(argsJson);
      if (bytes > o.maxArgBytes) return Promise.resolve(tooLarge(bytes, o.maxArgBytes));
    }
    const n = ++this.#submitted;
    if (n > o.maxCalls) {
      return Promise.resolve({
        ok: false,
        fatal: { kind: 'call-limit', message: `the program made more than ${o.maxCalls} tool calls: do fewer calls per run (batch, or split the work into several runs)` },
      });
    }
    const args = JSON.parse(argsJson) as JsonValue;
    const safe = o.registry.get(name)?.isConcurrencySafe(args) ?? false;
    const callId = `${o.runCallId}:ptc:${n}`;
    let journaled: JournaledCall | undefined;
    if (o.journal !== undefined) {
      const planned = o.journal.plan(n, name, args, argsJson, readsJson, { callId, runCallId: o.runCallId, rootCallId: o.rootCallId, sessionId: o.sessionId, name });
      if (!('seq' in planned)) return Promise.resolve(planned);
      journaled = planned;
    }
    const trace: NestedCallMessage | undefined = !nestedCallChannel.hasSubscribers ? undefined : {
      phase: 'call',
      callId,
      rootCallId: o.rootCallId,
      sessionId: o.sessionId,
      name,
      runCallId: o.runCallId,
      bytesIn: Buffer.byteLength(argsJson),
    };
    const submit = (): Promise<SandboxCallOutcome> => new Promise<SandboxCallOutcome>((resolve) => {
      this.#enqueue({ callId, name, args, safe, resolve, done: false, journaled, trace, submittedAt: performance.now(), startedAt: 0 });
    });
    return trace === undefined ? submit() : traceCall(trace, (this.#undelivered ??= new Set()), submit);
  };

  #enqueue(pending: Pending): void {
    this.#queue.push(pending);
    this.#submitting = pending;
    this.#pump();
    this.#submitting = undefined;
    // Still last in the queue: it waits for its turn (the queue only ever loses its head).
    const trace = pending.trace;
    if (trace !== undefined && this.#queue[this.#queue.length - 1] === pending) {
      pending.queued = startPhase({ phase: 'queued', callId: trace.callId, rootCallId: trace.rootCallId, sessionId: trace.sessionId, name: trace.name });
    }
  }

  /** The gated call the run paused at, once the pause is complete (the run then ends). */
  get pausedAt(): PendingCall | undefined {
    const paused = this.#paused;
    return paused === undefined || !this.#pauseSent ? undefined : { seq: paused.journaled!.seq, toolName: paused.name, args: paused.args };
  }

  /** Ends the run's calls: aborts those in flight, abandons those queued (they never start). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    // Only a dispatch still running holds the signal; aborting builds a DOMException (a stack capture), per run.
    if (this.#inFlight > 0 || this.#asking > 0) this.#controller.abort();
    const abandoned = this.#queue.slice(this.#head);
    this.#queue = [];
    this.#head = 0;
    for (const pending of abandoned) {
      this.#failed.set(pending.callId, pending.name);
      settleWith(pending, aborted(pending.name, pending.callId));
    }
  }

  /** Resolves once every started call has settled and its events are appended. */
  async settled(): Promise<void> {
    if (this.#inFlight > 0) {
      if (this.#idle === undefined) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => (resolve = r));
        this.#idle = { promise, resolve };
      }
      await this.#idle.promise;
    }
    await Promise.allSettled(this.#appends);
    // Every answer the sandbox was going to deliver has been (it encodes as each call resolves).
    if (this.#undelivered !== undefined) endUndelivered(this.#undelivered);
  }

  /** The tool name of the nested call `callId` when this run made it and it failed. */
  failedCall(callId: string): string | undefined {
    return this.#failed.get(callId);
  }

  /** Nested calls submitted so far (including one refused for the call limit). */
  get submitted(): number {
    return this.#submitted;
  }

  /** The dispatched calls' times and bytes, in submission order. */
  nestedCalls(): NestedCallStats[] {
    return this.#stats.sort((a, b) => seqOf(a.callId) - seqOf(b.callId));
  }

  #pump(): void {
    while (this.#head < this.#queue.length && !this.#closed && this.#paused === undefined) {
      const head = this.#queue[this.#head];
      if (this.#exclusiveRunning) return;
      if (head.safe ? this.#running >= this.#options.maxParallelCalls : this.#running > 0) return;
      const journaled = head.journaled;
      if (journaled !== undefined && !this.#mayStart(head, journaled)) return;
      this.#queue[this.#head++] = undefined as unknown as Pending;
      leaveQueue(head);
      if (this.#head === this.#queue.length) {
        this.#queue = [];
        this.#head = 0;
      }
      if (journaled?.answer !== undefined) {
        // Answered from the resumed run's journal: the tool does not run again.
        if (!journaled.answer.ok) this.#failed.set(head.callId, head.name);
        settleWith(head, journaled.answer);
        continue;
      }
      this.#start(head);
    }
  }

  /**
   * A journaled call at the head of the queue: false while its approval test is pending, or when
   * it needs approval (the run pauses, or, past its deadline, the call is denied and dequeued).
   */
  #mayStart(head: Pending, journaled: JournaledCall): boolean {
    const asked = journaled.approval;
    if (asked === undefined || journaled.needsApproval === false) return true;
    if (journaled.needsApproval === undefined) {
      if (journaled.asking === true) return false;
      journaled.asking = true;
      void asked.then((needed) => {
        journaled.needsApproval = needed;
        this.#pump();
      });
      return false;
    }
    const o = this.#options;
    const now = o.now?.() ?? Date.now();
    if (o.deadlineAt !== undefined && now >= o.deadlineAt) {
      const denial = o.journal!.deny(journaled, head.name, head.args, 'timeout', now);
      journaled.answer = { ok: false, error: { ...denial, callId: head.callId } };
      return true;
    }
    if (o.approveInPlace !== undefined && this.#inPlace.get(journaled) !== 'unanswered') {
      if (this.#inPlace.get(journaled) === 'asking') return false;
      this.#askInPlace(head, journaled, o.approveInPlace);
      return false;
    }
    this.#paused = head;
    this.#completePause();
    return false;
  }

  /** Asks for a decision on the gated call at the head of the queue; the queue holds until it comes. */
  #askInPlace(head: Pending, journaled: JournaledCall, ask: NonNullable<RunSchedulerOptions['approveInPlace']>): void {
    const o = this.#options;
    this.#inPlace.set(journaled, 'asking');
    this.#asking++;
    const call = { callId: head.callId, seq: journaled.seq, toolName: head.name, args: head.args, signal: this.#controller.signal };
    void ask(call).finally(() => this.#asking--).then(
      (decision) => {
        if (this.#closed) return;
        if (decision === undefined) this.#inPlace.set(journaled, 'unanswered');
        else {
          this.#inPlace.delete(journaled);
          const now = o.now?.() ?? Date.now();
          journaled.needsApproval = false;
          if (decision.decision === 'approve') journaled.decision = { ...decision, at: now };
          else {
            const denial = o.journal!.deny(journaled, head.name, head.args, decision.reason ?? 'denied', now);
            journaled.answer = { ok: false, error: { ...denial, callId: head.callId } };
          }
        }
        this.#pump();
      },
      () => {
        this.#inPlace.set(journaled, 'unanswered');
        if (!this.#closed) this.#pump();
      },
    );
  }

  /** Ends the paused run once every call started before the gated one has settled. */
  #completePause(): void {
    const paused = this.#paused;
    if (paused === undefined || this.#pauseSent || this.#inFlight > 0) return;
    this.#pauseSent = true;
    paused.resolve({ ok: false, fatal: { kind: 'abort', message: `the run paused for approval of call #${paused.journaled!.seq}` } });
  }

  #start(pending: Pending): void {
    const o = this.#options;
    pending.startedAt = pending === this.#submitting ? pending.submittedAt : performance.now();
    this.#running++;
    if (!pending.safe) this.#exclusiveRunning = true;
    // Only a call that may finish before its predecessor needs a gate.
    const previous = this.#previous;
    if (this.#running > 1 && previous !== undefined && !previous.done) this.#gates.set(pending.callId, previous);
    this.#previous = pending;
    // No sink, no event objects: nothing would read them.
    const sink = o.registry.eventSink;
    const base =
      sink === undefined ? undefined : { sessionId: o.sessionId, rootCallId: o.rootCallId, parentCallId: o.runCallId, callId: pending.callId, name: pending.name };
    if (base !== undefined) this.#append({ type: 'tool/ptc-dispatch-start', ...base, arguments: pending.args });
    const request: DispatchRequest = {
      name: pending.name,
      arguments: pending.args,
      callId: pending.callId,
      rootCallId: o.rootCallId,
      sessionId: o.sessionId,
      parent: o.token,
      signal: this.#controller.signal,
    };
    // Assigned, not spread: a spread of a conditional object copies through the slow path on every call.
    if (o.agent !== undefined) request.agent = o.agent;
    this.#inFlight++;
    void o.registry
      .dispatch(request)
      .then((result) => {
        try {
          this.#gates.delete(pending.callId);
          this.#running--;
          if (!pending.safe) this.#exclusiveRunning = false;
          if (base !== undefined) {
            const event: NewToolEvent = { type: 'tool/ptc-dispatch', ...base, isError: result.isError, content: result.content };
            if (result.isError && result.error.info !== undefined) event.error = { name: result.error.info.name, code: result.error.info.code };
            this.#append(event);
          }
          if (result.isError) this.#failed.set(pending.callId, pending.name);
          if (result.additionalContexts !== undefined) o.onContexts?.(result.additionalContexts);
          if (pending.journaled !== undefined) o.journal!.settle(pending.journaled, pending.name, pending.args, result);
          const stats = statsOf(pending, result.isError, this.#began);
          this.#stats.push(stats);
          const outcome = toOutcome(result, pending, stats);
          pending.resolve(outcome);
          markSettled(pending);
          this.#pump();
        } finally {
          if (--this.#inFlight === 0) {
            this.#idle?.resolve();
            if (this.#paused !== undefined) this.#completePause();
          }
        }
      });
  }

  #append(event: NewToolEvent): void {
    const { registry } = this.#options;
    const sink: EventSink | undefined = registry.eventSink;
    if (sink === undefined) return;
    const report = (error: unknown): void => (registry.reportSinkError ?? reportToStderr)(error, event);
    try {
      const appended = sink.append(event);
      if (appended instanceof Promise) this.#appends.push(appended.catch(report));
    } catch (error) {
      report(error);
    }
  }
}

function toOutcome(result: ToolExecutionResult, { callId }: Pending, stats: NestedCallStats): SandboxCallOutcome {
  if (!result.isError) return { ok: true, value: result.value, onDelivered: (bytes) => (stats.bytes = bytes) };
  return { ok: false, error: { code: result.error.info?.code ?? 'TOOL_FAILED', message: result.error.message, callId } };
}

/** A settled call's times; `bytes` is filled in when the sandbox delivers its value (`onDelivered`). */
function statsOf(pending: Pending, isError: boolean, began: number): NestedCallStats {
  const { callId, name, submittedAt, startedAt } = pending;
  const startMs = roundMs(startedAt - began);
  const queuedMs = roundMs(startedAt - submittedAt);
  const executeMs = roundMs(performance.now() - startedAt);
  return { callId, name, isError, startMs, queuedMs, executeMs, bytes: 0 };
}

/** The call number at the end of a nested callId (`<run>:ptc:<n>`). */
function seqOf(callId: string): number {
  return Number(callId.slice(callId.lastIndexOf(':') + 1));
}

function tooLarge(bytes: number, limit: number): SandboxCallOutcome {
  return {
    ok: false,
    error: {
      code: 'INVALID_ARGS',
      message: `tool arguments are ${bytes} bytes of JSON, over the ${limit}-byte limit for one call: pass less per call (split the data over several calls)`,
      callId: '',
    },
  };
}

function aborted(name: string, callId: string): SandboxCallOutcome {
  return {
    ok: false,
    error: { code: 'ABORTED_BEFORE_DISPATCH', message: `tool "${name}" was not started: the run ended first; nothing ran`, callId },
  };
}

/** For a registry that does not say how it reports sink errors (a hand-written ToolRegistry). */
function reportToStderr(error: unknown, event: NewToolEvent): void {
  const message = error instanceof Error ? error.message : 'unknown error';
  const callId = 'callId' in event ? event.callId : '?';
  console.error(`ptc-executor: the event sink lost ${event.type} of session ${event.sessionId}, call ${callId}: ${message}`);
}
