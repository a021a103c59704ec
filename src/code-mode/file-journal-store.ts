/**
 * A {@link JournalStore} in a folder (the service's `<data dir>/journals`): one JSON file per
 * run, written atomically (a temporary file, fsync, rename, fsync of the folder), so a paused run
 * survives a restart and a crash never leaves half a record. Files are 0600 in a 0700 folder: a
 * record holds a program, the arguments it passed and the values it received. One process per
 * folder: claims are serialised in this process (a database store serves several replicas), and
 * an index of every record's status, read from the folder once, lets a listing read only the
 * paused records and a sweep read none.
 */
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { JournalCorruptError, journalOverAt, type JournalStore, type RunJournal, type RunJournalStatus } from './journal-store.ts';

const SUFFIX = '.json';
/** Marks a file being written; one left by a crash is removed when the folder is first indexed. */
const SCRATCH = '.tmp-';
const STATUSES: ReadonlySet<string> = new Set<RunJournalStatus>(['paused', 'resuming', 'finished', 'rolled-back']);
const STATES: ReadonlySet<string> = new Set(['applied', 'failed', 'pending', 'denied', 'reverted']);

export interface FileJournalStoreOptions {
  /** The folder; made (mode 0700) on first write. */
  dir: string;
}

export function createFileJournalStore(options: FileJournalStoreOptions): JournalStore {
  const { dir } = options;
  let made: Promise<unknown> | undefined;
  /** Per callId, the last operation that writes it: claims and puts of one run go one after another. */
  const queues = new Map<string, Promise<unknown>>();
  let temp = 0;
  /** What the index keeps of a record: enough to list and sweep without reading it. */
  type Indexed = Pick<RunJournal, 'status' | 'pausedAt' | 'expiresAt' | 'endedAt'>;
  let index: Promise<Map<string, Indexed>> | undefined;
  const indexed = (): Promise<Map<string, Indexed>> => {
    const building = (index ??= scan());
    building.catch(() => {
      if (index === building) index = undefined;
    });
    return building;
  };
  const remember = (map: Map<string, Indexed>, journal: RunJournal): void => {
    map.set(journal.callId, { status: journal.status, pausedAt: journal.pausedAt, expiresAt: journal.expiresAt, ...(journal.endedAt === undefined ? {} : { endedAt: journal.endedAt }) });
  };

  const fileOf = (callId: string): string => path.join(dir, encodeURIComponent(callId) + SUFFIX);
  const serial = <T>(callId: string, work: () => Promise<T>): Promise<T> => {
    const previous = queues.get(callId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    queues.set(callId, tail);
    void tail.then(() => {
      if (queues.get(callId) === tail) queues.delete(callId);
    });
    return next;
  };

  const write = async (journal: RunJournal): Promise<void> => {
    // Indexed first: a scan never races a write of this process.
    const map = await indexed();
    made ??= mkdir(dir, { recursive: true, mode: 0o700 });
    await made;
    const target = fileOf(journal.callId);
    const scratch = `${target}${SCRATCH}${process.pid}-${++temp}`;
    const handle = await open(scratch, 'w', 0o600);
    try {
      await handle.writeFile(JSON.stringify(journal));
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(scratch, target);
    } catch (error) {
      await rm(scratch, { force: true });
      throw error;
    }
    remember(map, journal);
    await syncFolder();
  };

  const syncFolder = async (): Promise<void> => {
    const folder = await open(dir, 'r');
    try {
      await folder.sync();
    } finally {
      await folder.close();
    }
  };

  const names = async (): Promise<string[]> => {
    try {
      return await readdir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  };

  async function scan(): Promise<Map<string, Indexed>> {
    const map = new Map<string, Indexed>();
    for (const name of await names()) {
      if (name.includes(SCRATCH)) {
        await rm(path.join(dir, name), { force: true });
        continue;
      }
      if (!name.endsWith(SUFFIX)) continue;
      const callId = decodeURIComponent(name.slice(0, -SUFFIX.length));
      try {
        const journal = await read(callId);
        if (journal !== undefined) remember(map, journal);
      } catch {
        // An unreadable record is not indexed (so never listed nor swept); deciding it reports what is wrong.
      }
    }
    return map;
  }

  const read = async (callId: string): Promise<RunJournal | undefined> => {
    let text: string;
    try {
      text = await readFile(fileOf(callId), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return parseJournal(callId, text);
  };

  return {
    put: (journal) => serial(journal.callId, () => write(journal)),
    get: (callId) => read(callId),
    async listPaused(prefix) {
      const found: RunJournal[] = [];
      for (const [callId, entry] of await indexed()) {
        if (entry.status !== 'paused' || !callId.startsWith(prefix)) continue;
        let journal: RunJournal | undefined;
        try {
          journal = await read(callId);
        } catch {
          // An unreadable record is not listed; deciding it reports what is wrong.
          continue;
        }
        if (journal?.status === 'paused') found.push(journal);
      }
      return found.sort((a, b) => a.pausedAt - b.pausedAt);
    },
    claim: (callId, from, to) =>
      serial(callId, async () => {
        const journal = await read(callId);
        if (journal === undefined || journal.status !== from) return undefined;
        await write({ ...journal, status: to });
        return journal;
      }),
    async removeOverBefore(cutoff) {
      const map = await indexed();
      const isOver = (callId: string): boolean => {
        const entry = map.get(callId);
        const over = entry === undefined ? undefined : journalOverAt(entry);
        return over !== undefined && over < cutoff;
      };
      let removed = 0;
      for (const callId of [...map.keys()].filter(isOver)) {
        // Checked again in the run's queue: a claim may have moved it meanwhile.
        await serial(callId, async () => {
          if (!isOver(callId)) return;
          await rm(fileOf(callId), { force: true });
          map.delete(callId);
          removed++;
        });
      }
      if (removed > 0) await syncFolder();
      return removed;
    },
  };
}

/** The record in `text`, checked field by field: anything else is corrupt, never half-trusted. */
export function parseJournal(callId: string, text: string): RunJournal {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new JournalCorruptError(callId, 'it is not JSON: truncated or overwritten');
  }
  const problem = journalProblem(value, callId);
  if (problem !== undefined) throw new JournalCorruptError(callId, problem);
  return value as RunJournal;
}

function journalProblem(value: unknown, callId: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'it is not an object';
  const j = value as Record<string, unknown>;
  if (j.version !== 1) return `version ${JSON.stringify(j.version)} is not 1`;
  if (j.callId !== callId) return 'it names another run';
  if (typeof j.sessionId !== 'string') return 'sessionId is missing';
  const run = j.run as Record<string, unknown> | null;
  if (typeof run !== 'object' || run === null || typeof run.code !== 'string' || typeof run.description !== 'string') return 'the program is missing';
  if (run.timeoutMs !== undefined && typeof run.timeoutMs !== 'number') return 'run.timeoutMs is not a number';
  if (typeof j.status !== 'string' || !STATUSES.has(j.status)) return 'its status is unknown';
  if (!Array.isArray(j.reads) || !j.reads.every((read) => typeof read === 'number')) return 'reads is not a list of numbers';
  if (typeof j.pausedAt !== 'number' || typeof j.expiresAt !== 'number') return 'pausedAt or expiresAt is missing';
  if (j.endedAt !== undefined && typeof j.endedAt !== 'number') return 'endedAt is not a number';
  if (!Array.isArray(j.pending) || !j.pending.every(isCall)) return 'pending is malformed';
  if (!Array.isArray(j.entries)) return 'entries is not a list';
  let seq = 0;
  for (const [i, entry] of (j.entries as Record<string, unknown>[]).entries()) {
    if (!isCall(entry) || !((entry.seq as number) > seq) || typeof entry.state !== 'string' || !STATES.has(entry.state)) return `entry ${i + 1} is malformed`;
    seq = entry.seq as number;
  }
  return undefined;
}

function isCall(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const call = value as Record<string, unknown>;
  return typeof call.seq === 'number' && typeof call.toolName === 'string' && 'args' in call;
}
