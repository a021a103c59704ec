/**
 * Paused runs' journals in PostgreSQL (`ptc_journals`), so any replica can
 * answer a decision and resume the run, and a restart of every replica loses
 * none. The record is kept as its JSON text (lossless, key order kept); its
 * `status` lives in a column of its own, which is what a claim changes: one
 * `UPDATE … WHERE status = from RETURNING`, so of concurrent claims, on any
 * replicas, exactly one gets the row. `over_at` says when the record is over
 * (a claim leaves it as it was, so a sweep passes `resuming` rows by).
 */
import { parseJournal } from '../../src/code-mode/file-journal-store.ts';
import { journalOverAt, type JournalStore, type RunJournal, type RunJournalStatus } from '../../src/code-mode/journal-store.ts';
import type { Database } from './database.ts';

interface JournalRow {
  call_id: string;
  status: RunJournalStatus;
  record: string;
}

export function createPostgresJournalStore(db: Database): JournalStore {
  return {
    async put(journal) {
      await db.query(
        `INSERT INTO ptc_journals (call_id, status, paused_at, record, over_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (call_id) DO UPDATE SET status = EXCLUDED.status, paused_at = EXCLUDED.paused_at, record = EXCLUDED.record, over_at = EXCLUDED.over_at`,
        [journal.callId, journal.status, journal.pausedAt, JSON.stringify(journal), journalOverAt(journal) ?? null],
        'ptc_journal_put',
      );
    },
    async get(callId) {
      const { rows } = await db.query<JournalRow>('SELECT call_id, status, record FROM ptc_journals WHERE call_id = $1', [callId], 'ptc_journal_get');
      return rows.length === 0 ? undefined : readRow(rows[0]);
    },
    async listPaused(prefix) {
      const { rows } = await db.query<JournalRow>(
        `SELECT call_id, status, record FROM ptc_journals
         WHERE status = 'paused' AND left(call_id, length($1)) = $1 ORDER BY paused_at, call_id`,
        [prefix],
        'ptc_journal_list',
      );
      return rows.map(readRow);
    },
    async claim(callId, from, to) {
      // The record text still says `from`: that is the record as it was before the claim.
      const { rows } = await db.query<JournalRow>(
        'UPDATE ptc_journals SET status = $3 WHERE call_id = $1 AND status = $2 RETURNING call_id, $2::text AS status, record',
        [callId, from, to],
        'ptc_journal_claim',
      );
      return rows.length === 0 ? undefined : readRow(rows[0]);
    },
    async removeOverBefore(cutoff) {
      const { rowCount } = await db.query(`DELETE FROM ptc_journals WHERE over_at < $1 AND status <> 'resuming'`, [cutoff], 'ptc_journal_sweep');
      return rowCount ?? 0;
    },
  };
}

/** The stored record with the status column's word; a record that is not one rejects as corrupt. */
function readRow(row: JournalRow): RunJournal {
  return { ...parseJournal(row.call_id, row.record), status: row.status };
}
