/**
 * The schema, created at start by every replica. Each step is idempotent
 * (`IF NOT EXISTS`), and the whole run holds a transaction-scoped advisory
 * lock, so replicas starting at once apply it one after the other and the
 * later ones find nothing to do.
 *
 * Events are stored generically: the event's JSON text (without `seq`; text keeps key order and any string jsonb would refuse),
 * never one column per event type, so new event types need no migration.
 */
import type { Pool } from 'pg';

/** Arbitrary, fixed: the advisory lock key every replica takes while migrating. */
const MIGRATION_LOCK = 7_700_017;

const STEPS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ptc_sessions (
     session_id text PRIMARY KEY,
     last_seq bigint NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS ptc_events (
     session_id text NOT NULL,
     seq bigint NOT NULL,
     event text NOT NULL,
     PRIMARY KEY (session_id, seq)
   )`,
  `CREATE TABLE IF NOT EXISTS ptc_replicas (
     replica text PRIMARY KEY,
     heartbeat_at timestamptz NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS ptc_runs (
     call_id text PRIMARY KEY,
     session_id text NOT NULL,
     name text NOT NULL,
     replica text NOT NULL,
     state text NOT NULL CHECK (state IN ('running', 'ok', 'failed', 'cancelled', 'lost')),
     started_at timestamptz NOT NULL,
     ended_at timestamptz
   )`,
  `CREATE TABLE IF NOT EXISTS ptc_spill (
     session_id text NOT NULL,
     call_id text NOT NULL,
     body bytea NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (session_id, call_id)
   )`,
  `CREATE INDEX IF NOT EXISTS ptc_runs_running ON ptc_runs (replica) WHERE state = 'running'`,
  // Retention: what each session's events weigh, and when it last had one.
  `ALTER TABLE ptc_sessions ADD COLUMN IF NOT EXISTS bytes bigint NOT NULL DEFAULT 0`,
  `ALTER TABLE ptc_sessions ADD COLUMN IF NOT EXISTS changed_at timestamptz NOT NULL DEFAULT now()`,
  `CREATE INDEX IF NOT EXISTS ptc_sessions_changed ON ptc_sessions (changed_at)`,
  // Durable runs: the journal's JSON text; status and pause time in columns for claims and listing.
  `CREATE TABLE IF NOT EXISTS ptc_journals (
     call_id text PRIMARY KEY,
     status text NOT NULL CHECK (status IN ('paused', 'resuming', 'finished', 'rolled-back')),
     paused_at bigint NOT NULL,
     record text NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS ptc_journals_paused ON ptc_journals (paused_at) WHERE status = 'paused'`,
  // When a record is over (journalOverAt), so a sweep removes it without reading records.
  `ALTER TABLE ptc_journals ADD COLUMN IF NOT EXISTS over_at bigint`,
  `CREATE INDEX IF NOT EXISTS ptc_journals_over ON ptc_journals (over_at) WHERE over_at IS NOT NULL`,
];

export async function migrate(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    for (const step of STEPS) await client.query(step);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
