/**
 * A JSONL file sink: one append-only file `<dir>/<sessionId>.jsonl` per
 * session, one stamped event per line (`{"seq":N,"at":…,…}`), `seq`
 * monotonic per session and continued after a reopen.
 *
 * Durability: `append` only buffers; `flush(sessionId)` writes the buffered
 * lines in order and fsyncs them (group commit: flushes that arrive while a
 * write is in flight share the next round). The registry awaits `flush`
 * before an outer dispatch returns, so an event the caller has seen is on
 * disk. Rounds are bounded in bytes, so a large backlog is written as several
 * rounds and never joined into one string.
 *
 * Faults: a failed round is cut back off the file (no torn line is left; if
 * even that fails, the file is closed and the reopen cuts the torn tail), its
 * events and every other line the failed flush waited for are dropped, and a
 * `log/gap` line naming them takes their place at the next write. Later
 * events keep being persisted. The unwritten backlog of all sessions is
 * capped (`maxBacklogBytes`): past it `append` throws, so a full disk cannot
 * grow the heap. While writes fail, `writeState()` and `health()` say so (the
 * service refuses new runs and `/readyz` fails); `health()` probes the folder
 * with a write as large as the round that failed, and the sink recovers once
 * that or a real round succeeds.
 *
 * Open files: at most `maxOpenFiles` session files are held open; the least
 * recently used idle one is closed to open another, and reopened on demand.
 * Reads open the file for the length of one page.
 *
 * One writer per file: two sinks (or processes) on the same folder are not
 * supported.
 */
import { join, resolve } from 'node:path';
import type { EventPage, EventSink, NewToolEvent, ReadPageOptions, SessionLogEvent, ToolEvent } from '../events.ts';
import { isoClock } from './iso-clock.ts';
import { parseEventLine, readPage } from './jsonl-read.ts';
import { nodeSinkFs, type SinkFileHandle, type SinkFs } from './sink-fs.ts';

export interface JsonlEventSinkOptions {
  /** Folder holding the session files; created on first use. */
  dir: string;
  /** Session files held open at once (plus one directory handle while new files are made durable). Default 32; the least recently used idle file is closed past it. */
  maxOpenFiles?: number;
  /** Bytes written per round (one write + fsync); a larger backlog takes several rounds. Default 4 MiB. */
  maxRoundBytes?: number;
  /** Bytes (UTF-8) of lines appended and not yet written, all sessions together. Default 64 MiB; past it `append` throws an {@link EventLogError} (reason `BACKLOG_FULL`). */
  maxBacklogBytes?: number;
  /** File operations; node's by default (tests inject faults here). */
  fs?: SinkFs;
}

export type SinkHealth = { ok: true } | { ok: false; code: string; message: string };

export interface JsonlEventSink extends EventSink {
  /** Stamps and buffers the event; async only while the session file is being opened. */
  append(event: NewToolEvent): ToolEvent | Promise<ToolEvent>;
  /** Resolves once every event appended so far for `sessionId` is written and fsynced; rejects (an {@link EventLogError}) if some were lost. */
  flush(sessionId: string): Promise<void>;
  /** One page of the durable events of a session (`seq > after`), streamed from the file. */
  readPage(sessionId: string, options?: ReadPageOptions): Promise<EventPage>;
  /** Every durable event with `seq > after`, in order (whole log in memory: prefer `readPage`). Throws on a damaged log. */
  read(sessionId: string, options?: { after?: number }): Promise<SessionLogEvent[]>;
  /** Whether writes currently succeed; while they fail, each call (at most once a second) probes the folder with a write as large as the round that failed. */
  health(): Promise<SinkHealth>;
  /** The last known state, without probing: not ok from a failed write until a write succeeds. */
  writeState(): SinkHealth;
  /** Deletes a session's log (retention). False when the session is busy (events pending) or has no file; a later append starts a new log at seq 1. */
  removeSession(sessionId: string): Promise<boolean>;
  /** Flushes every session and closes the files. Later appends throw. */
  close(): Promise<void>;
}

/** A write or open of a session log failed; `cause` has the system error. */
export class EventLogError extends Error {
  override name = 'EventLogError';
  readonly code = 'EVENT_LOG_FAILED' as const;
  /** The system error code (`ENOSPC`, `EROFS`, …) or `EVENT_LOG_FAILED`. */
  readonly reason: string;
  constructor(message: string, reason: string, cause: unknown) {
    super(message, { cause });
    this.reason = reason;
  }
}

/** Session ids become file names only when they match this. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

interface Line {
  seq: number;
  text: string;
  /** UTF-8 bytes of `text`. */
  bytes: number;
}

interface Waiter {
  target: number;
  resolve(): void;
  reject(error: unknown): void;
}

interface Session {
  readonly id: string;
  readonly file: string;
  fh: SinkFileHandle | undefined;
  /** File size after the last good write: a failed round is cut back to it. */
  size: number;
  seq: number;
  /** The file's last seq has been read (after the first open); appends can then stamp without it. */
  seqKnown: boolean;
  opening: Promise<void> | undefined;
  /** Appends queued behind `opening`, so later appends keep their order. */
  waiting: number;
  buffer: Line[];
  /** Lines stamped, and lines settled (written or dropped), since this record was made. */
  appended: number;
  settled: number;
  /** Flushes want every line before this index settled. */
  target: number;
  writing: boolean;
  /** The write loop while `writing`. */
  running: Promise<void> | undefined;
  waiters: Waiter[];
  /** Events lost to a failed round, recorded by the next round as a `log/gap` line. */
  gap: { fromSeq: number; toSeq: number; code: string; message: string } | undefined;
}

const DEFAULT_MAX_OPEN = 32;
const DEFAULT_ROUND_BYTES = 4 * 1024 * 1024;
const DEFAULT_BACKLOG_BYTES = 64 * 1024 * 1024;
const READ_CHUNK = 64 * 1024;
const PROBE_INTERVAL_MS = 1_000;

export function createJsonlEventSink(options: JsonlEventSinkOptions): JsonlEventSink {
  if (typeof options?.dir !== 'string' || options.dir === '') {
    throw new TypeError('createJsonlEventSink needs { dir }: the folder for session files');
  }
  const dir = resolve(options.dir);
  const fs = options.fs ?? nodeSinkFs;
  const maxOpen = positive(options.maxOpenFiles ?? DEFAULT_MAX_OPEN, 'maxOpenFiles');
  const maxRoundBytes = positive(options.maxRoundBytes ?? DEFAULT_ROUND_BYTES, 'maxRoundBytes');
  const maxBacklogBytes = positive(options.maxBacklogBytes ?? DEFAULT_BACKLOG_BYTES, 'maxBacklogBytes');
  /** Bytes of lines stamped and not yet written or dropped (rounds in flight included). */
  let backlog = 0;
  /** Bytes of the round that last failed: the probe writes as much. */
  let failedRoundBytes = 0;
  /** Least recently used first. */
  const sessions = new Map<string, Session>();
  const clock = isoClock();
  let closed = false;
  /** Session files open or being opened. */
  let openCount = 0;
  const slotWaiters: (() => void)[] = [];
  let failing: { code: string; message: string } | undefined;
  let lastProbe = 0;
  /** Logs being deleted: an append to one opens its new file only once the old one is gone. */
  const removing = new Map<string, Promise<unknown>>();

  function fileOf(sessionId: string): string {
    if (typeof sessionId !== 'string' || !SESSION_ID_PATTERN.test(sessionId)) {
      throw new RangeError(
        `session id ${JSON.stringify(String(sessionId)).slice(0, 140)} cannot name a file: use 1–128 of A–Z a–z 0–9 _ -`,
      );
    }
    return join(dir, `${sessionId}.jsonl`);
  }

  function sessionOf(sessionId: string): Session {
    let s = sessions.get(sessionId);
    if (s === undefined) {
      s = {
        id: sessionId,
        file: fileOf(sessionId),
        fh: undefined,
        size: 0,
        seq: 0,
        seqKnown: false,
        opening: undefined,
        waiting: 0,
        buffer: [],
        appended: 0,
        settled: 0,
        target: 0,
        writing: false,
        running: undefined,
        waiters: [],
        gap: undefined,
      };
    } else {
      sessions.delete(sessionId);
    }
    sessions.set(sessionId, s);
    return s;
  }

  // ---- open-file slots -------------------------------------------------

  function wakeSlotWaiter(): void {
    slotWaiters.shift()?.();
  }

  function releaseSlot(): void {
    openCount--;
    wakeSlotWaiter();
  }

  /** True when nothing is using the session's file right now. */
  function idle(s: Session): boolean {
    return s.fh !== undefined && s.opening === undefined && !s.writing;
  }

  /** Takes a slot for `s`: a free one, or the one of the least recently used idle session (closed first). */
  async function acquireSlot(s: Session): Promise<void> {
    while (true) {
      if (openCount < maxOpen) {
        openCount++;
        return;
      }
      // Least recently used first, and one with nothing buffered before one about to be flushed.
      let victim: Session | undefined;
      for (const candidate of sessions.values()) {
        if (candidate === s || !idle(candidate)) continue;
        if (candidate.buffer.length === 0) {
          victim = candidate;
          break;
        }
        victim ??= candidate;
      }
      if (victim !== undefined) {
        const fh = victim.fh!;
        victim.fh = undefined;
        forgetIfDone(victim);
        // The slot passes to `s` once the file is closed, so the bound holds at every moment.
        await fh.close().catch(() => undefined);
        return;
      }
      await new Promise<void>((wake) => slotWaiters.push(wake));
    }
  }

  /** Drops a closed session with nothing pending; a later append reopens the file and reads its seq. */
  function forgetIfDone(s: Session): void {
    if (s.fh === undefined && s.opening === undefined && !s.writing && s.waiting === 0 && s.buffer.length === 0 && s.gap === undefined && s.waiters.length === 0) {
      if (sessions.get(s.id) === s) sessions.delete(s.id);
    }
  }

  function ensureOpen(s: Session): Promise<void> | undefined {
    if (s.opening !== undefined) return s.opening;
    if (s.fh !== undefined) return undefined;
    const opening = (async () => {
      await removing.get(s.id);
      await acquireSlot(s);
      try {
        await openSession(fs, dir, s, syncDir);
      } catch (error) {
        releaseSlot();
        const failure = logError(s, error, 'open');
        failing = { code: failure.reason, message: failure.message };
        throw failure;
      }
    })().then(
      () => {
        s.opening = undefined;
        wakeSlotWaiter();
      },
      (error: unknown) => {
        s.opening = undefined;
        throw error;
      },
    );
    s.opening = opening;
    return opening;
  }

  /**
   * Makes new directory entries durable. One directory handle at a time (the
   * open-file bound is `maxOpenFiles` + 1), and files created while a sync
   * runs share the next one.
   */
  let dirSyncQueued: Promise<void> | undefined;
  let dirSyncRunning: Promise<void> = Promise.resolve();
  function syncDir(): Promise<void> {
    if (dirSyncQueued !== undefined) return dirSyncQueued;
    const queued = dirSyncRunning.catch(() => undefined).then(async () => {
      dirSyncQueued = undefined;
      const d = await fs.open(dir, 'r');
      try {
        await d.sync();
      } finally {
        await d.close();
      }
    });
    dirSyncQueued = queued;
    dirSyncRunning = queued;
    return queued;
  }

  // ---- stamping ----------------------------------------------------------

  function stamp(s: Session, event: NewToolEvent): ToolEvent {
    const seq = s.seq + 1;
    const { seq: _seq, at: _at, ...plain } = event as NewToolEvent & { seq?: unknown; at?: unknown };
    // seq first on every line: readers skip lines by it without parsing them.
    let stamped = Object.freeze({ seq, at: clock(), ...plain }) as unknown as ToolEvent;
    let text: string;
    try {
      text = `${JSON.stringify(stamped)}\n`;
    } catch (error) {
      // Too large to serialise (or not JSON): keep the event, without its content.
      stamped = Object.freeze(withoutContent(stamped, error)) as ToolEvent;
      text = `${JSON.stringify(stamped)}\n`;
    }
    const bytes = Buffer.byteLength(text);
    if (backlog + bytes > maxBacklogBytes) {
      throw new EventLogError(
        `the event log's unwritten backlog is at its ${maxBacklogBytes}-byte cap (writes are failing or slower than appends): event of session ${s.id} not stored`,
        'BACKLOG_FULL',
        undefined,
      );
    }
    backlog += bytes;
    s.seq = seq;
    s.buffer.push({ seq, text, bytes });
    s.appended++;
    return stamped;
  }

  // ---- writing -----------------------------------------------------------

  /** Takes the next round off the buffer: the pending gap line first, then lines up to `maxRoundBytes` (at least one). */
  function takeRound(s: Session): { lines: Line[]; gap: Session['gap']; data: Buffer } {
    const texts: string[] = [];
    let bytes = 0;
    const gap = s.gap;
    if (gap !== undefined) {
      const line = `${JSON.stringify({ seq: gap.toSeq, at: clock(), type: 'log/gap', sessionId: s.id, ...gap })}\n`;
      texts.push(line);
      bytes += line.length;
    }
    let n = 0;
    while (n < s.buffer.length && (n === 0 || bytes + s.buffer[n].text.length <= maxRoundBytes)) {
      texts.push(s.buffer[n].text);
      bytes += s.buffer[n].text.length;
      n++;
    }
    const lines = s.buffer.slice(0, n);
    s.buffer = s.buffer.slice(n);
    // One line may be large on its own; the round is then that line alone.
    const data = texts.length === 1 ? Buffer.from(texts[0], 'utf8') : Buffer.from(texts.join(''), 'utf8');
    return { lines, gap, data };
  }

  /** Writes rounds until every flush so far is settled. The first round is taken synchronously (group commit). */
  async function runRounds(s: Session): Promise<void> {
    s.writing = true;
    try {
      while (s.settled < s.target && s.buffer.length > 0) {
        const round = takeRound(s);
        s.gap = undefined;
        try {
          if (s.fh === undefined) await ensureOpen(s);
          await writeRound(s, round.data);
          s.settled += round.lines.length;
          backlog -= linesBytes(round.lines);
          failing = undefined;
          failedRoundBytes = 0;
          settleWaiters(s);
        } catch (error) {
          // Every line this flush waited for is dropped with the round: kept, they would only wait for the next failure.
          const lost = [...round.lines, ...s.buffer.splice(0, Math.max(0, s.target - s.settled - round.lines.length))];
          backlog -= linesBytes(lost);
          const fromSeq = round.gap?.fromSeq ?? lost[0].seq;
          const toSeq = lost.length > 0 ? lost[lost.length - 1].seq : (round.gap?.toSeq ?? 0);
          const failure = error instanceof EventLogError ? error : logError(s, error, 'write');
          s.gap = { fromSeq, toSeq, code: failure.reason, message: `events ${fromSeq}–${toSeq} were not stored: ${failure.reason}` };
          s.settled += lost.length;
          failing = { code: failure.reason, message: failure.message };
          failedRoundBytes = Math.max(failedRoundBytes, round.data.length);
          const lostError = new EventLogError(`${failure.message}; events ${fromSeq}–${toSeq} of session ${s.id} were lost`, failure.reason, failure);
          for (const waiter of s.waiters.splice(0)) waiter.reject(lostError);
          s.target = s.settled;
          break;
        }
      }
    } finally {
      s.writing = false;
      s.running = undefined;
      wakeSlotWaiter();
    }
  }

  function settleWaiters(s: Session): void {
    const still: Waiter[] = [];
    for (const waiter of s.waiters) {
      if (waiter.target <= s.settled) waiter.resolve();
      else still.push(waiter);
    }
    s.waiters = still;
  }

  /** Writes one round and fsyncs it; on failure cuts it back off, or closes the file so the reopen repairs it. */
  async function writeRound(s: Session, data: Buffer): Promise<void> {
    const fh = s.fh!;
    try {
      let offset = 0;
      while (offset < data.length) {
        const { bytesWritten } = await fh.write(data, offset, data.length - offset);
        offset += bytesWritten;
      }
      await fh.datasync();
      s.size += data.length;
    } catch (error) {
      let repaired = false;
      try {
        await fh.truncate(s.size);
        repaired = true;
      } catch {
        // The reopen cuts the torn tail instead.
      }
      if (!repaired || s.fh !== fh) {
        if (s.fh === fh) s.fh = undefined;
        await fh.close().catch(() => undefined);
        releaseSlot();
      }
      throw error;
    }
  }

  async function flush(sessionId: string): Promise<void> {
    const s = sessions.get(sessionId);
    if (s === undefined) return;
    // Appends queued behind an open run first, so their lines are in the buffer.
    if (s.opening !== undefined) await s.opening;
    const target = s.appended;
    if (s.settled >= target) return;
    return new Promise<void>((resolve, reject) => {
      s.waiters.push({ target, resolve, reject });
      s.target = Math.max(s.target, target);
      if (!s.writing) s.running = runRounds(s);
    });
  }

  function logError(s: Session, error: unknown, what: 'open' | 'write'): EventLogError {
    const reason = (error as NodeJS.ErrnoException | undefined)?.code ?? 'EVENT_LOG_FAILED';
    const detail = error instanceof Error ? error.message.replace(dir, '<data dir>') : String(error);
    return new EventLogError(`could not ${what} the session log of ${s.id} (${reason}): ${detail}`, reason, error);
  }

  /** Writes and syncs as many bytes as the round that failed (a tiny write fits on a nearly full disk anyway). */
  async function probe(): Promise<void> {
    const file = join(dir, `.probe-${process.pid}`);
    await fs.mkdir(dir);
    const fh = await fs.open(file, 'w');
    try {
      const data = Buffer.alloc(Math.max(6, Math.min(failedRoundBytes, maxRoundBytes)), 0x0a);
      for (let offset = 0; offset < data.length; ) {
        const { bytesWritten } = await fh.write(data, offset, data.length - offset);
        offset += bytesWritten;
      }
      await fh.datasync();
    } finally {
      await fh.close().catch(() => undefined);
      await fs.unlink(file).catch(() => undefined);
    }
  }

  // Methods never use `this`: they may be passed around detached.
  return {
    append(event) {
      if (closed) throw new Error('the JSONL event sink is closed: create a new one to keep logging');
      const s = sessionOf(event.sessionId);
      if (s.seqKnown && s.opening === undefined && s.waiting === 0) return stamp(s, event);
      const opening = ensureOpen(s);
      if (opening === undefined && s.waiting === 0) return stamp(s, event);
      s.waiting += 1;
      return (opening ?? Promise.resolve()).then(
        () => {
          s.waiting -= 1;
          return stamp(s, event);
        },
        (error: unknown) => {
          s.waiting -= 1;
          forgetIfDone(s);
          throw error;
        },
      );
    },

    flush,

    readPage: readSessionPage,

    async read(sessionId, readOptions = {}) {
      const events: SessionLogEvent[] = [];
      let after = readOptions.after ?? 0;
      while (true) {
        const page = await readSessionPage(sessionId, { after, limit: 1000 });
        events.push(...page.events);
        if (page.damage !== undefined) throw new Error(`the event log of session ${sessionId} is corrupt: ${page.damage.message}`);
        if (page.next === undefined) return events;
        after = page.next;
      }
    },

    writeState() {
      return failing === undefined ? { ok: true } : { ok: false, ...failing };
    },

    async health() {
      if (failing === undefined) return { ok: true };
      if (Date.now() - lastProbe >= PROBE_INTERVAL_MS) {
        lastProbe = Date.now();
        try {
          await probe();
          failing = undefined;
          failedRoundBytes = 0;
          return { ok: true };
        } catch {
          // Still failing.
        }
      }
      return failing === undefined ? { ok: true } : { ok: false, ...failing };
    },

    async removeSession(sessionId) {
      const file = fileOf(sessionId);
      const s = sessions.get(sessionId);
      if (s !== undefined) {
        if (s.opening !== undefined || s.writing || s.waiting > 0 || s.buffer.length > 0 || s.waiters.length > 0 || s.gap !== undefined) return false;
        sessions.delete(sessionId);
      }
      const fh = s?.fh;
      const removal = (async () => {
        if (fh !== undefined) {
          await fh.close().catch(() => undefined);
          releaseSlot();
        }
        try {
          await fs.unlink(file);
          return true;
        } catch {
          return false;
        }
      })();
      removing.set(sessionId, removal);
      try {
        return await removal;
      } finally {
        if (removing.get(sessionId) === removal) removing.delete(sessionId);
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      const errors: unknown[] = [];
      for (const [sessionId, s] of [...sessions]) {
        try {
          await flush(sessionId);
        } catch (error) {
          errors.push(error);
        }
        if (s.opening !== undefined) await s.opening.catch(() => undefined);
        await s.running;
        const fh = s.fh;
        s.fh = undefined;
        if (fh !== undefined) {
          await fh.close().catch((error: unknown) => errors.push(error));
          releaseSlot();
        }
      }
      sessions.clear();
      if (errors.length > 0) throw new AggregateError(errors, 'the JSONL event sink could not flush or close every session file');
    },
  };

  async function readSessionPage(sessionId: string, readOptions: ReadPageOptions = {}): Promise<EventPage> {
    const file = fileOf(sessionId);
    let fh: SinkFileHandle;
    try {
      fh = await fs.open(file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { events: [] };
      const reason = (error as NodeJS.ErrnoException).code ?? 'EVENT_LOG_FAILED';
      throw new EventLogError(`could not read the session log of ${sessionId} (${reason})`, reason, error);
    }
    try {
      return await readPage(fh, readOptions);
    } finally {
      await fh.close().catch(() => undefined);
    }
  }
}

function linesBytes(lines: readonly Line[]): number {
  let total = 0;
  for (const line of lines) total += line.bytes;
  return total;
}

function positive(value: number, name: string): number {
  if (!(Number.isSafeInteger(value) && value >= 1)) throw new RangeError(`${name} must be a positive integer (got ${String(value)})`);
  return value;
}

function withoutContent(event: ToolEvent, error: unknown): ToolEvent {
  const why = `[not stored: the event could not be serialised (${error instanceof Error ? error.message : 'unknown error'})]`;
  if (event.type === 'tool/ptc-dispatch-start') return { ...event, arguments: { truncated: why } };
  if (event.type === 'agent/context') return { ...event, content: [{ type: 'text', text: why }] };
  const { error: _error, additionalContexts: _contexts, ...rest } = event as Extract<ToolEvent, { type: 'tool/result' }>;
  return { ...rest, content: [{ type: 'text', text: why }] } as ToolEvent;
}

async function openSession(fs: SinkFs, dir: string, s: Session, syncDir: () => Promise<void>): Promise<void> {
  await fs.mkdir(dir);
  const fh = await fs.open(s.file, 'a+');
  try {
    const { size } = await fh.stat();
    const { end, lastSeq } = await scanTail(fh, size, s.id);
    if (end < size) {
      await fh.truncate(end);
      await fh.datasync();
    }
    if (size === 0) {
      // A new file: make its directory entry durable too.
      await syncDir();
    }
    s.seq = Math.max(s.seq, lastSeq);
    s.seqKnown = true;
    s.size = end;
    s.fh = fh;
  } catch (error) {
    await fh.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Finds the end of the last complete, parseable line and its `seq`, reading
 * backwards. Anything after it is a torn tail. A non-empty file with complete
 * lines but none parseable is refused rather than cut.
 */
async function scanTail(fh: SinkFileHandle, size: number, sessionId: string): Promise<{ end: number; lastSeq: number }> {
  let start = size;
  let tail = Buffer.alloc(0);
  let sawCompleteLine = false;
  while (true) {
    const from = Math.max(0, start - READ_CHUNK);
    const chunk = Buffer.alloc(start - from);
    await readFully(fh, chunk, from);
    tail = Buffer.concat([chunk, tail]);
    start = from;
    let lineEnd = tail.lastIndexOf(0x0a);
    while (lineEnd >= 0) {
      const prev = lineEnd > 0 ? tail.lastIndexOf(0x0a, lineEnd - 1) : -1;
      if (prev < 0 && start > 0) break;
      sawCompleteLine = true;
      const line = tail.subarray(prev + 1, lineEnd);
      const seq = parseEventLine(line.toString('utf8'))?.seq ?? undefined;
      if (seq !== undefined) return { end: start + lineEnd + 1, lastSeq: seq };
      lineEnd = prev;
    }
    if (start === 0) {
      if (sawCompleteLine) throw new Error(`the session log of ${sessionId} is not an event log (no line parses as an event): move it away`);
      return { end: 0, lastSeq: 0 };
    }
  }
}

async function readFully(fh: SinkFileHandle, buffer: Buffer, position: number): Promise<void> {
  let offset = 0;
  while (offset < buffer.length) {
    const { bytesRead } = await fh.read(buffer, offset, buffer.length - offset, position + offset);
    if (bytesRead === 0) break;
    offset += bytesRead;
  }
}

