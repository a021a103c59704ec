/**
 * Durable runs' storage contract (docs/architecture.md, "Durable runs"), types only. A run that
 * meets a gated call pauses: its journal goes to a {@link JournalStore}, and a decision later
 * claims it there and resumes the run by replay, on this process or another. Implementations:
 * in memory (`memory-journal-store.ts`), a data folder (`file-journal-store.ts`); a database store
 * implements the same few methods.
 */
import { PtcError } from '../errors.ts';
import type { JsonValue } from '../json.ts';

/** Where one nested call of a journaled run stands. */
export type JournalEntryState = 'applied' | 'failed' | 'pending' | 'denied' | 'reverted';

/** A person's answer to a gated call. */
export interface ApprovalDecision {
  decision: 'approve' | 'deny';
  /** Why (shown to the program with a denial). */
  reason?: string;
  /** Who decided (free text: a user name, a token's tenant). */
  by?: string;
}

/** One nested call, by its submission number (1, 2, … in the order the program issued them). */
export interface JournalEntry {
  seq: number;
  toolName: string;
  /** The canonical arguments: the argument JSON the program submitted, parsed. */
  args: JsonValue;
  state: JournalEntryState;
  /** What the program received when `applied` (or `reverted`): the frozen value. Absent for a `replay: 'reexecute'` tool. */
  value?: JsonValue;
  /** What the program received when `failed` or `denied`. */
  error?: { code: string; message: string };
  /** The tool declared `replay: 'reexecute'`: a resumed run runs this call again. */
  reexecute?: true;
  /** The decision on a gated call, once made. */
  decision?: ApprovalDecision & { at: number };
}

/** A gated call waiting for a decision. */
export interface PendingCall {
  seq: number;
  toolName: string;
  args: JsonValue;
}

/**
 * `paused`: waiting for a decision. `resuming`: a decision claimed it and the run is replaying.
 * `finished`: the resumed run ended (done or failed); kept for rollback. `rolled-back`: reverted.
 */
export type RunJournalStatus = 'paused' | 'resuming' | 'finished' | 'rolled-back';

/** Everything a resume needs, as stored. Plain JSON. */
export interface RunJournal {
  /** The record's format; a store refuses other versions as corrupt. */
  version: 1;
  /** run_code's callId (the service's tenant prefix included). */
  callId: string;
  sessionId: string;
  /** The run_code arguments, to run the same program again. */
  run: { code: string; description: string; timeoutMs?: number };
  status: RunJournalStatus;
  /** The nested calls, in `seq` order; while paused, every seq from 1 to the gated call's. */
  entries: JournalEntry[];
  /** Values the program read from Date.now(), new Date(), Math.random() (and the like), in order, up to the gated call. */
  reads: number[];
  /** The gated calls waiting (one today); empty once decided. */
  pending: PendingCall[];
  /** Epoch ms of the pause. */
  pausedAt: number;
  /** Epoch ms after which the gated call is denied with reason `expired`. */
  expiresAt: number;
  /** Epoch ms when the run became `finished` or `rolled-back`. */
  endedAt?: number;
}

/**
 * Where paused runs wait. Small on purpose: put, get, list and one compare-and-set. Every method
 * may reject (I/O); `get` and `claim` reject with a {@link JournalCorruptError} for a record they
 * cannot read (and never return a partly read one), `listPaused` leaves such records out.
 */
export interface JournalStore {
  /** Stores `journal`, replacing any record of its callId. Resolves once it is durable. */
  put(journal: RunJournal): Promise<void>;
  /** The record of `callId`, or undefined when there is none. */
  get(callId: string): Promise<RunJournal | undefined>;
  /** Paused runs whose callId starts with `prefix` (a tenant's; '' for all), oldest pause first. */
  listPaused(prefix: string): Promise<RunJournal[]>;
  /**
   * Moves the run from status `from` to `to` atomically, and resolves the record as it was before
   * (status `from`). Resolves undefined, changing nothing, when there is no record or it is not in
   * `from`: of concurrent claims on one record, exactly one wins.
   */
  claim(callId: string, from: RunJournalStatus, to: RunJournalStatus): Promise<RunJournal | undefined>;
  /**
   * Optional: removes the records that are over before `cutoff` (epoch ms; see {@link journalOverAt})
   * and resolves how many went. A store without it keeps every record.
   */
  removeOverBefore?(cutoff: number): Promise<number>;
  /** Releases what the store holds (files, connections). */
  close?(): Promise<void>;
}

/**
 * When a record stops being of use but for a rollback, epoch ms: a paused run's expiry, a finished
 * or rolled-back run's end. Undefined while a decision resumes it.
 */
export function journalOverAt(journal: Pick<RunJournal, 'status' | 'pausedAt' | 'expiresAt' | 'endedAt'>): number | undefined {
  switch (journal.status) {
    case 'paused':
      return journal.expiresAt;
    case 'resuming':
      return undefined;
    default:
      // A record from before `endedAt` existed ended after its pause.
      return journal.endedAt ?? journal.pausedAt;
  }
}

/** A stored journal that cannot be read (truncated, edited, another format): the resume runs nothing. */
export class JournalCorruptError extends PtcError {
  override name = 'JournalCorruptError';
  constructor(callId: string, why: string) {
    super('JOURNAL_CORRUPT', `the journal of run ${JSON.stringify(callId)} cannot be read (${why}); nothing was run: start the work again as a new run`);
  }
}
