/**
 * The in-memory {@link JournalStore}: the library's default. Paused runs live as long as the
 * process; records are copied in and out, so a caller's later change never reaches the store.
 */
import { journalOverAt, type JournalStore, type RunJournal } from './journal-store.ts';

export function createMemoryJournalStore(): JournalStore {
  const records = new Map<string, RunJournal>();
  return {
    async put(journal) {
      records.set(journal.callId, structuredClone(journal));
    },
    async get(callId) {
      const found = records.get(callId);
      return found === undefined ? undefined : structuredClone(found);
    },
    async listPaused(prefix) {
      return [...records.values()]
        .filter((record) => record.status === 'paused' && record.callId.startsWith(prefix))
        .sort((a, b) => a.pausedAt - b.pausedAt)
        .map((record) => structuredClone(record));
    },
    // Synchronous between the read and the write: one claim wins.
    async claim(callId, from, to) {
      const found = records.get(callId);
      if (found === undefined || found.status !== from) return undefined;
      const before = structuredClone(found);
      found.status = to;
      return before;
    },
    async removeOverBefore(cutoff) {
      let removed = 0;
      for (const [callId, record] of records) {
        const over = journalOverAt(record);
        if (over !== undefined && over < cutoff && records.delete(callId)) removed++;
      }
      return removed;
    },
  };
}
