/**
 * The runs table, shared by every replica.
 *
 * Liveness: each replica upserts its row in `ptc_replicas` every
 * `heartbeatMs`. Each replica also reaps: a replica whose heartbeat is older
 * than `staleMs` is deleted, and every `running` run of a replica that has
 * no row is marked `lost` in the same statement, which returns each lost run
 * exactly once (row locks: two reapers never both get it). The reaper then
 * appends a failed `tool/result` for it, so the session log ends well-formed.
 * With the defaults (2 s, 6 s, 2 s) a dead replica's runs are lost within
 * about 8 s. After a database outage, a replica reaps only once it has
 * itself been beating again for `staleMs` (every heartbeat is old then, and
 * the living must not be taken for dead).
 *
 * A graceful stop (SIGTERM) drains first, so its runs all ended; it then
 * deletes its own row, and nothing is lost.
 *
 * Cancels: a DELETE on a replica that does not run the call notifies
 * `ptc_cancel` with the callId; every replica listens, and the one running
 * it cancels it.
 */
import type { ErrorCode } from '../../src/errors.ts';
import type { NewToolEvent } from '../../src/events.ts';
import type { RunLedger, RunRecord, RunState } from '../run-ledger.ts';
import { CHANNELS, type Database } from './database.ts';

export interface PostgresRunLedgerOptions {
  db: Database;
  replica: string;
  /** Appends the failed `tool/result` of a lost run (the session store). */
  append(event: NewToolEvent): unknown;
  /** Cancels a run of this replica (the run tracker); false when it does not run here. */
  cancelLocal(callId: string): boolean;
  heartbeatMs?: number;
  staleMs?: number;
  onWarning?: (message: string, error: unknown) => void;
}

export const HEARTBEAT_MS = 2_000;
export const STALE_MS = 6_000;

export const RUN_LOST_CODE: ErrorCode = 'RUN_LOST';

export async function createPostgresRunLedger(options: PostgresRunLedgerOptions): Promise<RunLedger> {
  const { db, replica } = options;
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const staleMs = options.staleMs ?? STALE_MS;
  /** Ends whose write failed (the database was down): retried each beat. */
  const unwritten = new Map<string, Exclude<RunState, 'running' | 'lost'>>();
  /** End writes in flight: `close` waits for them, so a drained replica leaves no run `running` behind. */
  const writing = new Set<Promise<void>>();
  let closed = false;

  const beat = () => db.query('INSERT INTO ptc_replicas (replica, heartbeat_at) VALUES ($1, now()) ON CONFLICT (replica) DO UPDATE SET heartbeat_at = now()', [replica]);
  await beat();

  const writeEnd = async (callId: string, state: string) => {
    await db.query("UPDATE ptc_runs SET state = $2, ended_at = now() WHERE call_id = $1 AND state = 'running'", [callId, state], 'ptc_run_end');
  };

  async function reap(): Promise<void> {
    await db.query('DELETE FROM ptc_replicas WHERE heartbeat_at < now() - make_interval(secs => $1) AND replica <> $2', [staleMs / 1000, replica]);
    const { rows } = await db.query<{ call_id: string; session_id: string; name: string; replica: string }>(
      `UPDATE ptc_runs r SET state = 'lost', ended_at = now()
       WHERE state = 'running' AND NOT EXISTS (SELECT 1 FROM ptc_replicas p WHERE p.replica = r.replica)
       RETURNING call_id, session_id, name, replica`,
    );
    for (const row of rows) {
      const message = `the run was lost: replica ${row.replica} stopped (no heartbeat for ${staleMs / 1000} s) before it finished; events appended before that are kept. Run it again if it is safe to repeat.`;
      try {
        await options.append({
          type: 'tool/result',
          sessionId: row.session_id,
          callId: row.call_id,
          name: row.name,
          isError: true,
          content: [{ type: 'text', text: message }],
          error: { message, info: { name: 'RunLostError', code: RUN_LOST_CODE } },
        });
      } catch (error) {
        options.onWarning?.('could not append the result of a lost run', error);
      }
    }
  }

  /**
   * Since when this replica's beats have succeeded without a break. After a
   * database outage every replica's heartbeat is old; a replica reaps only
   * once it has itself been beating for `staleMs`, so the others had the
   * same chance to beat again and are not taken for dead.
   */
  let beatingSince: number | undefined = performance.now();
  let ticking = false;
  const timer = setInterval(() => {
    if (ticking || closed) return;
    ticking = true;
    void (async () => {
      try {
        try {
          await beat();
        } catch (error) {
          beatingSince = undefined;
          throw error;
        }
        beatingSince ??= performance.now();
        for (const [callId, state] of [...unwritten]) {
          await writeEnd(callId, state);
          unwritten.delete(callId);
        }
        if (performance.now() - beatingSince >= staleMs) await reap();
      } catch (error) {
        options.onWarning?.('heartbeat or reaping failed (PostgreSQL unreachable?)', error);
      } finally {
        ticking = false;
      }
    })();
  }, heartbeatMs);
  timer.unref();

  const unsubscribe = db.subscribe((channel, payload) => {
    if (channel === CHANNELS.cancel) options.cancelLocal(payload);
  });

  return {
    replica,
    async started(run) {
      const result = await db.query(
        `INSERT INTO ptc_runs (call_id, session_id, name, replica, state, started_at) VALUES ($1, $2, $3, $4, 'running', now())
         ON CONFLICT (call_id) DO UPDATE SET session_id = $2, name = $3, replica = $4, state = 'running', started_at = now(), ended_at = NULL
         WHERE ptc_runs.state <> 'running'`,
        [run.callId, run.sessionId, run.name.slice(0, 256), replica],
        'ptc_run_start',
      );
      return result.rowCount === 1;
    },
    ended(callId, state) {
      const write = writeEnd(callId, state).catch(() => {
        unwritten.set(callId, state);
      });
      writing.add(write);
      void write.finally(() => writing.delete(write));
      return write;
    },
    async get(callId) {
      const { rows } = await db.query<{ call_id: string; session_id: string; state: RunState; replica: string; started_at: Date; ended_at: Date | null }>(
        'SELECT call_id, session_id, state, replica, started_at, ended_at FROM ptc_runs WHERE call_id = $1',
        [callId],
      );
      if (rows.length === 0) return undefined;
      const row = rows[0];
      const record: RunRecord = { callId: row.call_id, sessionId: row.session_id, state: row.state, replica: row.replica, startedAt: row.started_at.toISOString() };
      if (row.ended_at !== null) record.endedAt = row.ended_at.toISOString();
      return record;
    },
    async cancelElsewhere(callId) {
      const { rows } = await db.query<{ replica: string }>("SELECT replica FROM ptc_runs WHERE call_id = $1 AND state = 'running'", [callId]);
      if (rows.length === 0) return false;
      await db.query('SELECT pg_notify($1, $2)', [CHANNELS.cancel, callId]);
      return true;
    },
    async close() {
      closed = true;
      clearInterval(timer);
      unsubscribe();
      await Promise.all(writing);
      for (const [callId, state] of [...unwritten]) await writeEnd(callId, state).catch(() => undefined);
      await db.query('DELETE FROM ptc_replicas WHERE replica = $1', [replica]).catch(() => undefined);
    },
  };
}
