/**
 * A JSONL file sink: one append-only file `<dir>/<sessionId>.jsonl` per
 * session, one stamped event per line, `seq` monotonic per session and
 * continued after a reopen.
 *
 * Durability: `append` only buffers; `flush(sessionId)` writes the buffered
 * lines in order and fsyncs them as one group (group commit: flushes that
 * arrive while a write is in flight share the next round). The registry
 * awaits `flush` before an outer dispatch returns, so an event the caller
 * has seen is on disk. On open, a torn tail left by a crash (a last line
 * without its newline, or trailing lines that do not parse) is cut off; a
 * failed write closes the file so the next append reopens and repairs it.
 *
 * One writer per file: two sinks (or processes) on the same folder are not
 * supported.
 */
import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { EventSink, NewToolEvent, ToolEvent } from '../events.ts';
import { isoClock } from './iso-clock.ts';

export interface JsonlEventSinkOptions {
  /** Folder holding the session files; created on first use. */
  dir: string;
}

export interface JsonlEventSink extends EventSink {
  /** Stamps and buffers the event; async only while the session file is being opened. */
  append(event: NewToolEvent): ToolEvent | Promise<ToolEvent>;
  /** Resolves once every event appended so far for `sessionId` is written and fsynced. */
  flush(sessionId: string): Promise<void>;
  /** The durable events of a session (those with `seq > after`), in order. A torn last line is ignored. */
  read(sessionId: string, options?: { after?: number }): Promise<ToolEvent[]>;
  /** Flushes every session and closes the files. Later appends throw. */
  close(): Promise<void>;
}

/** Session ids become file names only when they match this. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

interface Session {
  readonly file: string;
  fh: FileHandle | undefined;
  seq: number;
  /** Set while the file is being (re)opened. */
  opening: Promise<void> | undefined;
  /** Appends queued behind `opening`, so later appends keep their order. */
  waiting: number;
  buffer: string[];
  inFlight: Promise<void> | undefined;
  queued: Promise<void> | undefined;
}

const READ_CHUNK = 64 * 1024;

export function createJsonlEventSink(options: JsonlEventSinkOptions): JsonlEventSink {
  if (typeof options?.dir !== 'string' || options.dir === '') {
    throw new TypeError('createJsonlEventSink needs { dir }: the folder for session files');
  }
  const dir = resolve(options.dir);
  const sessions = new Map<string, Session>();
  const clock = isoClock();
  let closed = false;

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
      s = { file: fileOf(sessionId), fh: undefined, seq: 0, opening: undefined, waiting: 0, buffer: [], inFlight: undefined, queued: undefined };
      sessions.set(sessionId, s);
    }
    return s;
  }

  function ensureOpen(s: Session): Promise<void> | undefined {
    if (s.opening !== undefined) return s.opening;
    if (s.fh !== undefined) return undefined;
    const opening = openSession(dir, s).then(
      () => {
        s.opening = undefined;
      },
      (error: unknown) => {
        s.opening = undefined;
        throw error;
      },
    );
    s.opening = opening;
    return opening;
  }

  function stamp(s: Session, event: NewToolEvent): ToolEvent {
    const stamped = Object.freeze({ ...event, seq: s.seq + 1, at: clock() }) as ToolEvent;
    // Serialised before the seq is taken: an event that cannot be written leaves no gap.
    const line = `${JSON.stringify(stamped)}\n`;
    s.seq += 1;
    s.buffer.push(line);
    return stamped;
  }

  function startRound(s: Session): Promise<void> {
    if (s.buffer.length === 0) return Promise.resolve();
    const data = Buffer.from(s.buffer.join(''), 'utf8');
    s.buffer = [];
    const round = (async () => {
      if (s.fh === undefined) await ensureOpen(s);
      await writeRound(s, data);
    })();
    s.inFlight = round;
    const clear = (): void => {
      if (s.inFlight === round) s.inFlight = undefined;
    };
    round.then(clear, clear);
    return round;
  }

  function flushOpen(s: Session): Promise<void> {
    if (s.queued !== undefined) return s.queued;
    if (s.inFlight !== undefined) {
      if (s.buffer.length === 0) return s.inFlight;
      const after = (): Promise<void> => {
        s.queued = undefined;
        return startRound(s);
      };
      s.queued = s.inFlight.then(after, after);
      return s.queued;
    }
    return startRound(s);
  }

  async function flush(sessionId: string): Promise<void> {
    const s = sessions.get(sessionId);
    if (s === undefined) return;
    // Appends queued behind an open run first, so their lines are in the buffer.
    if (s.opening !== undefined) await s.opening;
    await flushOpen(s);
  }

  // Methods never use `this`: they may be passed around detached.
  return {
    append(event) {
      if (closed) throw new Error('the JSONL event sink is closed: create a new one to keep logging');
      const s = sessionOf(event.sessionId);
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
          throw error;
        },
      );
    },

    flush,

    async read(sessionId, readOptions = {}) {
      const after = readOptions.after ?? 0;
      let text: string;
      try {
        text = await readFile(fileOf(sessionId), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
      return parseLog(text, sessionId).filter((event) => event.seq > after);
    },

    async close() {
      if (closed) return;
      closed = true;
      const errors: unknown[] = [];
      for (const [sessionId, s] of sessions) {
        try {
          await flush(sessionId);
        } catch (error) {
          errors.push(error);
        }
        if (s.opening !== undefined) await s.opening.catch(() => undefined);
        await s.fh?.close().catch((error: unknown) => errors.push(error));
        s.fh = undefined;
      }
      sessions.clear();
      if (errors.length > 0) throw new AggregateError(errors, 'the JSONL event sink could not flush or close every session file');
    },
  };
}

/** Writes one group and fsyncs it; on failure closes the file so the next use reopens and repairs it. */
async function writeRound(s: Session, data: Buffer): Promise<void> {
  const fh = s.fh!;
  try {
    let offset = 0;
    while (offset < data.length) {
      const { bytesWritten } = await fh.write(data, offset, data.length - offset);
      offset += bytesWritten;
    }
    await fh.datasync();
  } catch (error) {
    if (s.fh === fh) s.fh = undefined;
    await fh.close().catch(() => undefined);
    throw error;
  }
}

async function openSession(dir: string, s: Session): Promise<void> {
  await mkdir(dir, { recursive: true });
  const fh = await open(s.file, 'a+');
  try {
    const { size } = await fh.stat();
    const { end, lastSeq } = await scanTail(fh, size, s.file);
    if (end < size) {
      await fh.truncate(end);
      await fh.datasync();
    }
    if (size === 0) {
      // A new file: make its directory entry durable too.
      const d = await open(dir, 'r');
      try {
        await d.sync();
      } finally {
        await d.close();
      }
    }
    s.seq = Math.max(s.seq, lastSeq);
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
async function scanTail(fh: FileHandle, size: number, file: string): Promise<{ end: number; lastSeq: number }> {
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
      const seq = seqOf(tail.toString('utf8', prev + 1, lineEnd));
      if (seq !== undefined) return { end: start + lineEnd + 1, lastSeq: seq };
      lineEnd = prev;
    }
    if (start === 0) {
      if (sawCompleteLine) throw new Error(`${file} is not an event log (no line parses as an event): move it away`);
      return { end: 0, lastSeq: 0 };
    }
  }
}

async function readFully(fh: FileHandle, buffer: Buffer, position: number): Promise<void> {
  let offset = 0;
  while (offset < buffer.length) {
    const { bytesRead } = await fh.read(buffer, offset, buffer.length - offset, position + offset);
    if (bytesRead === 0) break;
    offset += bytesRead;
  }
}

function seqOf(line: string): number | undefined {
  try {
    const parsed: unknown = JSON.parse(line);
    const seq = (parsed as { seq?: unknown } | null)?.seq;
    return Number.isSafeInteger(seq) && (seq as number) >= 1 ? (seq as number) : undefined;
  } catch {
    return undefined;
  }
}

/** Parses a log; unparseable lines are tolerated only at the end (a torn tail). */
function parseLog(text: string, sessionId: string): ToolEvent[] {
  const lines = text.split('\n');
  // The piece after the last newline is empty or a torn, unterminated line.
  lines.pop();
  const events: ToolEvent[] = [];
  let badLine = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line === '') continue;
    let event: ToolEvent | undefined;
    try {
      event = JSON.parse(line) as ToolEvent;
    } catch {
      event = undefined;
    }
    if (event === undefined || typeof event !== 'object' || event === null || typeof event.seq !== 'number') {
      if (badLine < 0) badLine = i;
      continue;
    }
    if (badLine >= 0) {
      throw new Error(`the event log of session ${sessionId} is corrupt at line ${badLine + 1}: repair or move the file`);
    }
    events.push(event);
  }
  return events;
}
