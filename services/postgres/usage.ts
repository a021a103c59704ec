/**
 * Retention's view of the session logs in PostgreSQL (services/retention.ts):
 * each session's counter row keeps the bytes of its events and when it last
 * had one (bumped by the append itself), so a quota check is one indexed
 * read, and expired sessions go with one `DELETE … WHERE changed_at < $1`.
 */
import type { SessionUsage } from '../retention.ts';
import type { Database } from './database.ts';

/** `LIKE` matches `_` and `%` anywhere: a tenant prefix is matched literally. */
const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The session rows go first, in the same statement as their events: an append
 * racing the removal waits on the row lock, then starts the session afresh.
 */
const REMOVE_EXPIRED = `
WITH gone AS (
  DELETE FROM ptc_sessions WHERE changed_at < $1 RETURNING session_id
), events AS (
  DELETE FROM ptc_events WHERE session_id IN (SELECT session_id FROM gone)
), spill AS (
  DELETE FROM ptc_spill WHERE session_id IN (SELECT session_id FROM gone)
)
SELECT count(*)::int AS removed FROM gone`;

export function createPostgresSessionUsage(db: Database): SessionUsage {
  return {
    async sessionBytes(sessionId) {
      const { rows } = await db.query<{ bytes: string }>('SELECT bytes FROM ptc_sessions WHERE session_id = $1', [sessionId], 'ptc_session_bytes');
      return rows.length === 0 ? 0 : Number(rows[0].bytes);
    },
    async tenantBytes(prefix) {
      const { rows } =
        prefix === ''
          ? await db.query<{ bytes: string }>('SELECT coalesce(sum(bytes), 0) AS bytes FROM ptc_sessions', [], 'ptc_all_bytes')
          : await db.query<{ bytes: string }>('SELECT coalesce(sum(bytes), 0) AS bytes FROM ptc_sessions WHERE session_id LIKE $1', [likePrefix(prefix)], 'ptc_tenant_bytes');
      return Number(rows[0].bytes);
    },
    // The append keeps the row's bytes itself.
    touched: () => undefined,
    async removeOlderThan(cutoff) {
      const { rows } = await db.query<{ removed: number }>(REMOVE_EXPIRED, [cutoff]);
      return rows[0].removed;
    },
  };
}
