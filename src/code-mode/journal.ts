/**
 * One run's journal while it runs (docs/architecture.md, "Durable runs"): every nested call by
 * its submission number, and the nondeterministic values the program read before each. Built
 * only for a run that may pause (its tools include a gated one) or that resumes one; it stays in
 * memory and becomes a stored {@link RunJournal} only if the run pauses (or, resumed, ends).
 */
import type { JsonValue } from '../json.ts';
import type { SandboxCallOutcome } from '../sandbox-runtime.ts';
import type { ApprovalCall, ToolExecutionResult } from '../tool.ts';
import type { JournalEntry, PendingCall, RunJournal } from './journal-store.ts';

export type ApprovalTest = (args: JsonValue, call: ApprovalCall) => boolean | Promise<boolean>;

export interface RunJournalOptions {
  /** The approval test of a tool whose calls may need approval; undefined for the others. */
  approvalOf(name: string): ApprovalTest | undefined;
  /** Does the tool declare `replay: 'reexecute'`? */
  reexecutes(name: string): boolean;
  /** The journal of the paused run this one resumes, its gated call decided. */
  resumes?: RunJournal;
}

/** How the scheduler treats one call of a journaled run. */
export interface JournaledCall {
  seq: number;
  /** Answered from the journal: no dispatch. */
  answer?: SandboxCallOutcome;
  /** Ask before starting it: resolves true when the call needs approval (a test that throws says yes). */
  approval?: Promise<boolean>;
  /** Settled by the approval test (the scheduler reads it once `approval` resolved). */
  needsApproval?: boolean;
  /** The scheduler waits for `approval`. */
  asking?: boolean;
  /** The decision the journal holds for this call (it runs for real, and keeps it). */
  decision?: JournalEntry['decision'];
}

export class RunJournalRecorder {
  readonly #options: RunJournalOptions;
  /** By seq - 1. */
  readonly #entries: JournalEntry[] = [];
  /** The reads made before each call, by seq - 1 (undefined: none). */
  readonly #reads: (number[] | undefined)[] = [];

  constructor(options: RunJournalOptions) {
    this.#options = options;
  }

  /** The stored journal of the paused run this one resumes. */
  get resumed(): RunJournal | undefined {
    return this.#options.resumes;
  }

  /** The run resumes a paused one: the reads to feed its program first. */
  get replayReads(): readonly number[] {
    return this.#options.resumes?.reads ?? [];
  }

  /**
   * Call `seq` was submitted. Answers a call the journal already holds, fails the run when the
   * program called something else there than the journal says, and asks gated tools.
   */
  plan(seq: number, name: string, args: JsonValue, argsJson: string, readsJson: string | undefined, call: ApprovalCall): JournaledCall | SandboxCallOutcome {
    if (readsJson !== undefined) this.#reads[seq - 1] = parseReads(readsJson);
    const earlier = this.#options.resumes?.entries[seq - 1];
    if (earlier !== undefined) {
      if (earlier.toolName !== name || JSON.stringify(earlier.args) !== argsJson) {
        return {
          ok: false,
          fatal: {
            kind: 'replay-divergence',
            message:
              `call #${seq} is not the call the paused run made there: the journal has tools.${earlier.toolName}(${JSON.stringify(earlier.args)}), ` +
              `this run called tools.${name}(${argsJson}); nothing further ran. A resumed program must make the same calls in the same order: run it as a new run instead`,
          },
        };
      }
      if (earlier.state === 'pending') return { seq, ...(earlier.decision === undefined ? {} : { decision: earlier.decision }) };
      if (earlier.state === 'denied') {
        this.#entries[seq - 1] = earlier;
        return { seq, answer: { ok: false, error: { ...denial(earlier), callId: call.callId } } };
      }
      if (earlier.reexecute !== true) {
        this.#entries[seq - 1] = earlier;
        const answer: SandboxCallOutcome =
          earlier.state === 'failed'
            ? { ok: false, error: { code: earlier.error?.code ?? 'TOOL_FAILED', message: earlier.error?.message ?? 'the tool failed', callId: call.callId } }
            : { ok: true, value: earlier.value ?? null };
        return { seq, answer };
      }
      return { seq };
    }
    const test = this.#options.approvalOf(name);
    if (test === undefined) return { seq };
    let asked: Promise<boolean>;
    try {
      asked = Promise.resolve(test(args, call)).then(
        (verdict) => verdict === true,
        () => true,
      );
    } catch {
      asked = Promise.resolve(true);
    }
    return { seq, approval: asked };
  }

  /** Call `seq` settled for real. */
  settle(planned: JournaledCall, name: string, args: JsonValue, result: ToolExecutionResult): void {
    const entry: JournalEntry = { seq: planned.seq, toolName: name, args, state: result.isError ? 'failed' : 'applied' };
    if (result.isError) entry.error = { code: result.error.info?.code ?? 'TOOL_FAILED', message: result.error.message };
    else if (this.#options.reexecutes(name)) entry.reexecute = true;
    else entry.value = result.value;
    if (planned.decision !== undefined) entry.decision = planned.decision;
    this.#entries[planned.seq - 1] = entry;
  }

  /** Call `seq` was denied without asking anyone (its run was past its deadline). */
  deny(planned: JournaledCall, name: string, args: JsonValue, reason: string, now: number): ApprovalDenial {
    const entry: JournalEntry = { seq: planned.seq, toolName: name, args, state: 'denied', decision: { decision: 'deny', reason, at: now } };
    entry.error = denial(entry);
    this.#entries[planned.seq - 1] = entry;
    return entry.error;
  }

  /**
   * The journal of a run paused at call `gate`: the calls before it (all settled), the gated one
   * pending, and the reads up to it. Fails with a message for the model when a value the journal
   * must keep is over `maxValueBytes`.
   */
  paused(gate: PendingCall, maxValueBytes: number): { entries: JournalEntry[]; reads: number[] } | { refused: string } {
    const entries: JournalEntry[] = [];
    for (let i = 0; i < gate.seq - 1; i++) {
      const entry = this.#entries[i];
      // Cannot happen (the scheduler lets every earlier call settle first); a journal with a hole would misreplay.
      if (entry === undefined) return { refused: `call #${i + 1} had not settled when the run paused; run the program again` };
      if (entry.value !== undefined) {
        const bytes = Buffer.byteLength(JSON.stringify(entry.value));
        if (bytes > maxValueBytes) {
          return {
            refused:
              `the run paused for approval of call #${gate.seq} (tools.${gate.toolName}), but call #${entry.seq} (tools.${entry.toolName}) returned ${bytes} bytes of JSON, ` +
              `over the ${maxValueBytes}-byte limit a paused run may keep per value: fetch less before the gated call (page, filter), or make the gated call first`,
          };
        }
      }
      entries.push(entry);
    }
    entries.push({ seq: gate.seq, toolName: gate.toolName, args: gate.args, state: 'pending' });
    return { entries, reads: this.readsUpTo(gate.seq) };
  }

  /** Every call journaled so far, in order (a resumed run's final record). */
  all(): JournalEntry[] {
    return this.#entries.filter((entry) => entry !== undefined);
  }

  readsUpTo(seq: number): number[] {
    const reads: number[] = [];
    for (let i = 0; i < seq && i < this.#reads.length; i++) {
      const some = this.#reads[i];
      if (some !== undefined) for (const value of some) reads.push(value);
    }
    return reads;
  }
}

export interface ApprovalDenial {
  code: string;
  message: string;
}

function denial(entry: JournalEntry): ApprovalDenial {
  const reason = entry.decision?.reason;
  const by = entry.decision?.by;
  return {
    code: 'APPROVAL_DENIED',
    message: `tools.${entry.toolName} was not approved${by === undefined ? '' : ` by ${by}`}${reason === undefined ? '' : `: ${reason}`}; it did not run. Go on without it, or ask the user`,
  };
}

function parseReads(readsJson: string): number[] | undefined {
  try {
    const reads = JSON.parse(readsJson) as unknown;
    return Array.isArray(reads) && reads.every((value) => typeof value === 'number') ? (reads as number[]) : undefined;
  } catch {
    return undefined;
  }
}
