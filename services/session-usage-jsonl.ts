/**
 * Retention's view of the JSONL session logs (services/retention.ts): the
 * size and last change of each `<sessionId>.jsonl`, read from the folder at
 * start (and at each expiry sweep) and refreshed whenever a session is asked
 * about or a run of it ends, so a quota check costs one `stat`, never a walk
 * of the folder.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SESSION_ID_PATTERN, type JsonlEventSink } from '../src/event-sinks/jsonl-sink.ts';
import type { SessionUsage } from './retention.ts';

const SUFFIX = '.jsonl';

export function createJsonlSessionUsage(dir: string, sink: Pick<JsonlEventSink, 'removeSession'>): SessionUsage {
  const index = new Map<string, { bytes: number; changedMs: number }>();
  const fileOf = (sessionId: string) => join(dir, `${sessionId}${SUFFIX}`);
  /** Refreshes after runs ended, which a tenant's total waits for. */
  const refreshing = new Set<Promise<number>>();

  async function refresh(sessionId: string): Promise<number> {
    try {
      const info = await stat(fileOf(sessionId));
      index.set(sessionId, { bytes: info.size, changedMs: info.mtimeMs });
      return info.size;
    } catch {
      index.delete(sessionId);
      return 0;
    }
  }

  /** Reads every log's size and last change from the folder. */
  async function scan(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const sessionId = name.endsWith(SUFFIX) ? name.slice(0, -SUFFIX.length) : '';
      if (SESSION_ID_PATTERN.test(sessionId)) await refresh(sessionId);
    }
  }
  const scanned = scan();

  return {
    async sessionBytes(sessionId) {
      await scanned;
      return refresh(sessionId);
    },
    async tenantBytes(prefix) {
      await scanned;
      await Promise.all(refreshing);
      let total = 0;
      for (const [sessionId, { bytes }] of index) if (sessionId.startsWith(prefix)) total += bytes;
      return total;
    },
    touched(sessionId) {
      const done = refresh(sessionId);
      refreshing.add(done);
      void done.finally(() => refreshing.delete(done));
    },
    async removeOlderThan(cutoff) {
      await scanned;
      // The folder is read again: what the index holds may be stale, and logs may have come from elsewhere.
      await scan();
      let removed = 0;
      for (const [sessionId, { changedMs }] of [...index]) {
        if (changedMs >= cutoff.getTime()) continue;
        if (await sink.removeSession(sessionId)) {
          index.delete(sessionId);
          removed++;
        }
      }
      return removed;
    },
  };
}
