/**
 * Durable runs (docs/architecture.md, "Durable runs"): which runs keep a journal, how a run
 * pauses at a gated call, how a decision resumes it by replay, and how a rollback reverts it.
 * One per Code Mode instance; run_code's body and Code Mode's `pending`/`decide`/`rollback` use it.
 */
import { PtcError } from '../errors.ts';
import type { NewToolEvent } from '../events.ts';
import type { ToolRegistry } from '../tool.ts';
import { compileApprovalRules, type ApprovalRule } from './approval-rules.ts';
import type { ApprovalDecision, JournalStore, PendingCall, RunJournal, RunJournalStatus } from './journal-store.ts';
import { RunJournalRecorder, type ApprovalTest } from './journal.ts';

export interface DurableRunsOptions {
  registry: ToolRegistry;
  store: JournalStore;
  approvals?: readonly ApprovalRule[];
  /** How long a paused run waits for a decision, ms; later its gated call is denied `expired`. */
  approvalTtlMs: number;
  /** Bytes of one value a paused run's journal may keep. */
  maxJournalValueBytes: number;
  /**
   * How long a record is kept once it is over, ms: after a paused run expired, or a resumed run
   * finished or was rolled back. Until then it can be rolled back (and an expired one decided).
   */
  journalRetentionMs: number;
  /** Epoch ms. */
  now(): number;
}

/** A paused run as `pending()` lists it. */
export interface PausedRun {
  callId: string;
  sessionId: string;
  /** The program's one-line description. */
  description: string;
  pending: PendingCall[];
  /** Epoch ms. */
  pausedAt: number;
  /** Epoch ms; after it a decision denies the call with reason `expired`. */
  expiresAt: number;
}

/** A run that paused at least once, as `status()` tells it. */
export interface DurableRunStatus {
  callId: string;
  sessionId: string;
  status: RunJournalStatus;
  /** The calls waiting while `paused`. */
  pending: PendingCall[];
  pausedAt: number;
  expiresAt: number;
}

/** What run_code's value holds when its run paused. */
export interface PausedValue {
  callId: string;
  pending: PendingCall[];
  /** ISO-8601. */
  expiresAt: string;
}

/** What `rollback` did. */
export interface RollbackReport {
  callId: string;
  /** Applied calls reverted, newest first. */
  reverted: { seq: number; toolName: string }[];
  /** Applied calls left as they were: the tool has no `revert`, or its revert threw (the reason says which). */
  notReverted: { seq: number; toolName: string; reason: string }[];
}

const approveAlways: ApprovalTest = () => true;

/** Records that are over are looked for at most this often (on a pause or a listing). */
const SWEEP_EVERY_MS = 60 * 60 * 1000;

export class DurableRuns {
  readonly #options: DurableRunsOptions;
  readonly #rule: ((toolName: string) => boolean) | undefined;
  /** Decided runs about to run again, by callId: run_code's body takes its journal from here; `paused` is the record as claimed. */
  readonly #resumes = new Map<string, { journal: RunJournal; paused: RunJournal }>();
  /** Whether any registered tool may need approval; recomputed after the registry changes. */
  #anyGated: boolean | undefined;
  /** When records that are over were last removed (epoch ms). */
  #sweptAt = Number.NEGATIVE_INFINITY;
  #sweeping: Promise<void> | undefined;

  constructor(options: DurableRunsOptions) {
    this.#options = options;
    this.#rule = compileApprovalRules(options.approvals);
    options.registry.onChange(() => (this.#anyGated = undefined));
  }

  get store(): JournalStore {
    return this.#options.store;
  }

  now(): number {
    return this.#options.now();
  }

  /** The approval test of tool `name`: its own `needsApproval`, or an approval rule's; undefined when never. */
  approvalOf(name: string): ApprovalTest | undefined {
    const own = this.#options.registry.get(name)?.needsApproval;
    if (own !== undefined) return own;
    return this.#rule?.(name) === true ? approveAlways : undefined;
  }

  /**
   * The journal of run `callId`, when it needs one: it resumes a decided run, or one of its tools
   * may need approval. Ordinary runs get none and pay one cached check.
   */
  journalFor(callId: string, toolNames: readonly string[]): RunJournalRecorder | undefined {
    const resumes = this.#resumes.get(callId)?.journal;
    if (resumes !== undefined) this.#resumes.delete(callId);
    else {
      this.#anyGated ??= toolNames.some((name) => this.approvalOf(name) !== undefined);
      if (!this.#anyGated) return undefined;
    }
    const registry = this.#options.registry;
    return new RunJournalRecorder({
      approvalOf: (name) => this.approvalOf(name),
      reexecutes: (name) => registry.get(name)?.replay === 'reexecute',
      ...(resumes === undefined ? {} : { resumes }),
    });
  }

  /** Stores the journal of a run that paused at `gate`, logs `run/paused`, and returns what run_code's value says. */
  async pause(
    run: { callId: string; sessionId: string; code: string; description: string; timeoutMs?: number },
    journal: RunJournalRecorder,
    gate: PendingCall,
  ): Promise<PausedValue> {
    const kept = journal.paused(gate, this.#options.maxJournalValueBytes);
    if ('refused' in kept) throw new PtcError('CODE_RUN_FAILED', `code run failed (output-limit): ${kept.refused}`, { kind: 'output-limit' });
    const now = this.now();
    const expiresAt = now + this.#options.approvalTtlMs;
    const record: RunJournal = {
      version: 1,
      callId: run.callId,
      sessionId: run.sessionId,
      run: { code: run.code, description: run.description, ...(run.timeoutMs === undefined ? {} : { timeoutMs: run.timeoutMs }) },
      status: 'paused',
      entries: kept.entries,
      reads: kept.reads,
      pending: [gate],
      pausedAt: now,
      expiresAt,
    };
    await this.#options.store.put(record);
    await this.#sweepIfDue();
    const expires = new Date(expiresAt).toISOString();
    this.#append({
      type: 'run/paused',
      sessionId: run.sessionId,
      callId: run.callId,
      rootCallId: run.callId,
      pending: [{ seq: gate.seq, toolName: gate.toolName }],
      expiresAt: expires,
    });
    return { callId: run.callId, pending: [gate], expiresAt: expires };
  }

  /** A resumed run ended without pausing again: its record stays, `finished`, for a rollback. */
  async finish(journal: RunJournalRecorder): Promise<void> {
    const resumed = journal.resumed;
    if (resumed === undefined) return;
    const registry = this.#options.registry;
    // Only a value a revert will be handed is worth keeping now.
    const entries = journal.all().map((entry) => {
      if (entry.value === undefined || registry.get(entry.toolName)?.revert !== undefined) return entry;
      const { value: _dropped, ...kept } = entry;
      return kept;
    });
    await this.#options.store.put({ ...resumed, status: 'finished', entries, reads: [], pending: [], endedAt: this.now() });
  }

  /** Where run `callId` stands, when it ever paused; undefined otherwise. */
  async status(callId: string): Promise<DurableRunStatus | undefined> {
    const record = await this.#options.store.get(callId);
    if (record === undefined) return undefined;
    return { callId, sessionId: record.sessionId, status: record.status, pending: record.pending, pausedAt: record.pausedAt, expiresAt: record.expiresAt };
  }

  /** Paused runs whose callId starts with `prefix`, not yet expired, oldest first. */
  async pending(prefix = ''): Promise<PausedRun[]> {
    await this.#sweepIfDue();
    const now = this.now();
    const paused = await this.#options.store.listPaused(prefix);
    return paused
      .filter((record) => record.expiresAt > now)
      .map((record) => ({
        callId: record.callId,
        sessionId: record.sessionId,
        description: record.run.description,
        pending: record.pending,
        pausedAt: record.pausedAt,
        expiresAt: record.expiresAt,
      }));
  }

  /**
   * Claims paused run `callId` for a decision (exactly one of concurrent claims wins), records
   * the decision (a deny with reason `expired` once the run has waited too long) and logs
   * `run/resumed`. The caller then runs the program again: run_code's body finds the journal.
   */
  async claimForDecision(callId: string, decision: ApprovalDecision): Promise<RunJournal> {
    const made = checkDecision(decision);
    const store = this.#options.store;
    const claimed = await store.claim(callId, 'paused', 'resuming');
    if (claimed === undefined) throw await this.#notClaimable(callId, 'decided: it is not paused (decided already, or resuming)');
    const paused = structuredClone(claimed);
    const now = this.now();
    const final: ApprovalDecision = now >= claimed.expiresAt ? { decision: 'deny', reason: 'expired', ...(made.by === undefined ? {} : { by: made.by }) } : made;
    const gate = claimed.pending[0];
    const entry = gate === undefined ? undefined : claimed.entries[gate.seq - 1];
    if (entry !== undefined && entry.state === 'pending') {
      entry.decision = { ...final, at: now };
      if (final.decision === 'deny') entry.state = 'denied';
    }
    claimed.pending = [];
    claimed.status = 'resuming';
    this.#resumes.set(callId, { journal: claimed, paused });
    this.#append({
      type: 'run/resumed',
      sessionId: claimed.sessionId,
      callId,
      rootCallId: callId,
      decision: final.decision,
      ...(final.by === undefined ? {} : { by: final.by }),
      ...(final.reason === undefined ? {} : { reason: final.reason }),
    });
    return claimed;
  }

  /**
   * After a decision's dispatch: a claimed run whose program never started (the dispatch was
   * cancelled or refused before run_code's body) is paused again, undecided, as it was claimed.
   */
  async releaseUnstarted(callId: string): Promise<void> {
    const unstarted = this.#resumes.get(callId);
    if (unstarted === undefined) return;
    this.#resumes.delete(callId);
    await this.#options.store.put(unstarted.paused);
  }

  /**
   * Reverts run `callId`'s applied calls that have a `revert`, newest first. A revert that throws
   * is reported and the others go on. The run is `rolled-back` afterwards (a paused run with it:
   * it can no longer be decided).
   */
  async rollback(callId: string, signal: AbortSignal = new AbortController().signal): Promise<RollbackReport> {
    const store = this.#options.store;
    const claimed = (await store.claim(callId, 'finished', 'rolled-back')) ?? (await store.claim(callId, 'paused', 'rolled-back'));
    if (claimed === undefined) throw await this.#notClaimable(callId, 'rolled back: it is resuming, or was rolled back already');
    const registry = this.#options.registry;
    const report: RollbackReport = { callId, reverted: [], notReverted: [] };
    for (const entry of [...claimed.entries].reverse()) {
      if (entry.state !== 'applied') continue;
      const revert = registry.get(entry.toolName)?.revert;
      const done = { seq: entry.seq, toolName: entry.toolName };
      if (revert === undefined) {
        report.notReverted.push({ ...done, reason: 'the tool has no revert' });
        continue;
      }
      try {
        await revert(entry.args, entry.value ?? null, { callId: `${callId}:ptc:${entry.seq}`, runCallId: callId, sessionId: claimed.sessionId, name: entry.toolName, signal });
        entry.state = 'reverted';
        report.reverted.push(done);
      } catch (error) {
        report.notReverted.push({ ...done, reason: `its revert failed: ${describe(error)}` });
      }
    }
    await store.put({ ...claimed, status: 'rolled-back', pending: [], endedAt: this.now() });
    this.#append({ type: 'run/reverted', sessionId: claimed.sessionId, callId, rootCallId: callId, reverted: report.reverted, notReverted: report.notReverted });
    return report;
  }

  /**
   * Removes the records over for longer than `journalRetentionMs`, at most once per sweep period,
   * when the store can. A failed sweep is retried at the next period and fails nothing else.
   */
  async #sweepIfDue(): Promise<void> {
    const { store, journalRetentionMs } = this.#options;
    const now = this.now();
    if (store.removeOverBefore === undefined || now - this.#sweptAt < Math.min(SWEEP_EVERY_MS, journalRetentionMs)) return;
    this.#sweptAt = now;
    this.#sweeping ??= store
      .removeOverBefore(now - journalRetentionMs)
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => (this.#sweeping = undefined));
    await this.#sweeping;
  }

  async #notClaimable(callId: string, what: string): Promise<PtcError> {
    const found = await this.#options.store.get(callId);
    if (found === undefined) return new PtcError('RUN_NOT_FOUND', `no paused or resumed run has callId ${JSON.stringify(callId)}`);
    return new PtcError('RUN_NOT_PAUSED', `run ${JSON.stringify(callId)} is ${found.status} and cannot be ${what}; nothing was changed`);
  }

  #append(event: NewToolEvent): void {
    const { registry } = this.#options;
    const sink = registry.eventSink;
    if (sink === undefined) return;
    const report = (error: unknown): void => registry.reportSinkError?.(error, event);
    try {
      const appended = sink.append(event);
      if (appended instanceof Promise) void appended.catch(report);
    } catch (error) {
      report(error);
    }
  }
}

function checkDecision(input: ApprovalDecision): ApprovalDecision {
  const d = input as unknown as Record<string, unknown> | null;
  const problems: string[] = [];
  if (typeof d !== 'object' || d === null) problems.push('a decision must be an object { decision, reason?, by? }');
  else {
    if (d.decision !== 'approve' && d.decision !== 'deny') problems.push('decision: must be "approve" or "deny"');
    if (d.reason !== undefined && typeof d.reason !== 'string') problems.push('reason: must be a string, or left out');
    if (d.by !== undefined && typeof d.by !== 'string') problems.push('by: must be a string, or left out');
  }
  if (problems.length > 0) throw new PtcError('INVALID_ARGS', problems.join('; '));
  const { decision, reason, by } = input;
  return { decision, ...(reason === undefined ? {} : { reason }), ...(by === undefined ? {} : { by }) };
}

function describe(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'an error that could not be described';
  }
}
