/**
 * Where runs are recorded for `GET /v1/runs/:callId`: who runs a call, in
 * which session, and how it ended. Without a database this is the replica's
 * own memory (the most recent runs, bounded); with PostgreSQL every replica
 * shares one table (services/postgres/run-ledger.ts), heartbeats its running
 * calls, and reaps the runs of replicas that stopped heartbeating.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';

export type RunState = 'running' | 'ok' | 'failed' | 'cancelled' | 'lost';

export interface RunRecord {
  callId: string;
  sessionId: string;
  state: RunState;
  replica: string;
  startedAt: string;
  endedAt?: string;
}

export interface RunStart {
  callId: string;
  sessionId: string;
  /** The tool called (`run_code` for POST /v1/run): the lost-run `tool/result` names it. */
  name: string;
}

export interface RunLedger {
  readonly replica: string;
  /** Records a run as running; false when another replica runs that callId; rejects when the record cannot be written (the run must not start). */
  started(run: RunStart): Promise<boolean>;
  /** Records how a run ended; resolves once written (the response then follows, so a GET right after sees the end). Never rejects: a failed write is retried later. */
  ended(callId: string, state: Exclude<RunState, 'running' | 'lost'>): Promise<void>;
  get(callId: string): Promise<RunRecord | undefined>;
  /** Asks the replica running `callId` to cancel it; false when no replica runs it. */
  cancelElsewhere(callId: string): Promise<boolean>;
  /** Stops heartbeating and leaves the cluster cleanly (after the runs drained). */
  close(): Promise<void>;
}

/** This process's name in the runs table: the host (a pod's name on Kubernetes) and a random suffix, so a restarted pod is a new replica. */
export function replicaName(): string {
  return `${hostname().slice(0, 60)}-${randomUUID().slice(0, 8)}`;
}

/** Runs remembered without a database; the oldest ended ones are forgotten past it. */
export const MEMORY_LEDGER_RUNS = 10_000;

export function createMemoryRunLedger(replica = replicaName(), max = MEMORY_LEDGER_RUNS): RunLedger {
  const runs = new Map<string, RunRecord>();
  return {
    replica,
    async started(run) {
      runs.delete(run.callId);
      runs.set(run.callId, { callId: run.callId, sessionId: run.sessionId, state: 'running', replica, startedAt: new Date().toISOString() });
      if (runs.size > max) {
        for (const [callId, record] of runs) {
          if (runs.size <= max) break;
          if (record.state !== 'running') runs.delete(callId);
        }
      }
      return true;
    },
    async ended(callId, state) {
      const record = runs.get(callId);
      if (record !== undefined && record.state === 'running') {
        record.state = state;
        record.endedAt = new Date().toISOString();
      }
    },
    async get(callId) {
      const record = runs.get(callId);
      return record === undefined ? undefined : { ...record };
    },
    async cancelElsewhere() {
      return false;
    },
    async close() {},
  };
}
