/**
 * Spilled result text (config `spill`) in PostgreSQL when the database is
 * on: `ptc_spill (session_id, call_id, body)`, so the whole text is kept
 * whichever replica ran the call. A second spill of the same call id
 * replaces the first, as a file would be overwritten.
 */
import type { Database } from './database.ts';

export function createSpillWriter(db: Database): (sessionId: string, callId: string, bytes: Uint8Array) => Promise<void> {
  return async (sessionId, callId, bytes) => {
    await db.query(
      'INSERT INTO ptc_spill (session_id, call_id, body) VALUES ($1, $2, $3) ON CONFLICT (session_id, call_id) DO UPDATE SET body = EXCLUDED.body, created_at = now()',
      [sessionId, callId, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)],
    );
  };
}

/** The spilled text of a call, or undefined. */
export async function readSpill(db: Database, sessionId: string, callId: string): Promise<Buffer | undefined> {
  const { rows } = await db.query<{ body: Buffer }>('SELECT body FROM ptc_spill WHERE session_id = $1 AND call_id = $2', [sessionId, callId]);
  return rows[0]?.body;
}
