/** A test file's own PostgreSQL, with replica connections (embedded.ts starts the server). */
import { afterAll, beforeAll } from 'vitest';
import { openDatabase, type Database } from '../../services/postgres/database.ts';
import type { NewToolEvent } from '../../src/events.ts';
import { startTestDatabase, type TestDatabase } from './embedded.ts';

/**
 * The calling file's database: started before its tests, removed after them; `open()` connects
 * as a replica would (a pool of 4), and every connection opened is closed first.
 */
export function useTestDatabase(): { server(): TestDatabase; open(): Promise<Database> } {
  let pg: TestDatabase | undefined;
  const opened: Database[] = [];
  beforeAll(async () => {
    pg = await startTestDatabase();
  }, 120_000);
  afterAll(async () => {
    for (const db of opened) await db.close();
    await pg?.destroy();
  });
  return {
    server: () => pg!,
    async open() {
      const db = await openDatabase({ url: pg!.url, poolSize: 4 });
      opened.push(db);
      return db;
    },
  };
}

/** A run's `tool/result` event holding one text block. */
export const toolResultEvent = (sessionId: string, callId: string, text = 'ok'): NewToolEvent => ({
  type: 'tool/result',
  sessionId,
  callId,
  name: 'run_code',
  isError: false,
  content: [{ type: 'text', text }],
});
