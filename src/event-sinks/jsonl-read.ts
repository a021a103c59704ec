/**
 * Reading a session log a page at a time. The file is streamed in chunks, so
 * memory is bounded by the page (and the longest line), not the file, and
 * the event loop is never held for a whole file. Lines are written
 * `{"seq":N,...`, so a line's seq is read from its first bytes and lines at
 * or before `after` are skipped unparsed; a large `after` is found by a
 * binary search over the file (seqs increase down the file) before any
 * streaming starts.
 */
import {
  DEFAULT_PAGE_BYTES,
  DEFAULT_PAGE_LIMIT,
  type EventPage,
  type ReadPageOptions,
  type SessionLogEvent,
} from '../events.ts';
import type { SinkFileHandle } from './sink-fs.ts';

const CHUNK = 256 * 1024;
/** Below this distance the binary search stops and streaming takes over. */
const SEARCH_SPAN = 256 * 1024;
const SEQ_PREFIX = Buffer.from('{"seq":');

/** The seq of a line written by this sink, from its first bytes; undefined when the line has another shape. */
export function fastSeq(line: Uint8Array): number | undefined {
  if (line.length < SEQ_PREFIX.length + 2) return undefined;
  for (let i = 0; i < SEQ_PREFIX.length; i++) if (line[i] !== SEQ_PREFIX[i]) return undefined;
  let n = 0;
  let i = SEQ_PREFIX.length;
  for (; i < line.length && i < SEQ_PREFIX.length + 16; i++) {
    const c = line[i];
    if (c === 0x2c /* , */) break;
    if (c < 0x30 || c > 0x39) return undefined;
    n = n * 10 + (c - 0x30);
  }
  return line[i] === 0x2c && i > SEQ_PREFIX.length && Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

const LEGACY_TAIL = /"seq":(\d{1,15}),"at":"[^"\\]{10,40}"\}$/;

/**
 * The seq of a line written before seq came first (`…,"seq":N,"at":"…"}`),
 * from its last bytes: such a log is still skipped without parsing.
 */
export function legacySeq(text: string): number | undefined {
  const match = LEGACY_TAIL.exec(text.length > 80 ? text.slice(-80) : text);
  if (match === null) return undefined;
  const n = Number(match[1]);
  return n >= 1 ? n : undefined;
}

/** A parsed line, or undefined when it is not an event. */
export function parseEventLine(text: string): SessionLogEvent | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const seq = (parsed as { seq?: unknown }).seq;
    const type = (parsed as { type?: unknown }).type;
    return Number.isSafeInteger(seq) && (seq as number) >= 1 && typeof type === 'string' ? (parsed as SessionLogEvent) : undefined;
  } catch {
    return undefined;
  }
}

export async function readPage(fh: SinkFileHandle, options: ReadPageOptions = {}): Promise<EventPage> {
  const after = options.after ?? 0;
  const limit = Math.max(1, options.limit ?? DEFAULT_PAGE_LIMIT);
  const maxBytes = Math.max(1, options.maxBytes ?? DEFAULT_PAGE_BYTES);
  const { size } = await fh.stat();
  let position = after > 0 ? await seekAfter(fh, size, after) : 0;
  const events: SessionLogEvent[] = [];
  let pageBytes = 0;
  let lastSeq = 0;
  /** The current line: its start offset, its pieces so far (dropped once the line is known to be skipped). */
  let lineStart = position;
  let pieces: Buffer[] = [];
  let pieceBytes = 0;
  let skipping = false;
  let decided = false;
  const chunk = Buffer.allocUnsafe(CHUNK);

  while (position < size) {
    const { bytesRead } = await fh.read(chunk, 0, Math.min(CHUNK, size - position), position);
    if (bytesRead === 0) break;
    const data = chunk.subarray(0, bytesRead);
    let from = 0;
    while (from < data.length) {
      const nl = data.indexOf(0x0a, from);
      const end = nl < 0 ? data.length : nl;
      if (!skipping) {
        pieces.push(Buffer.from(data.subarray(from, end)));
        pieceBytes += end - from;
        // A line of this sink's shape that is at or before `after` needs no more of its bytes.
        if (!decided && (pieceBytes >= 24 || nl >= 0)) {
          decided = true;
          const seq = fastSeq(pieces.length === 1 ? pieces[0] : Buffer.concat(pieces));
          if (seq !== undefined && seq <= after) {
            skipping = true;
            lastSeq = Math.max(lastSeq, seq);
            pieces = [];
            pieceBytes = 0;
          }
        }
      }
      if (nl < 0) break;
      // A complete line.
      const offset = lineStart;
      lineStart = position + nl + 1;
      from = nl + 1;
      decided = false;
      if (skipping) {
        skipping = false;
        continue;
      }
      const bytes = pieceBytes;
      const text = Buffer.concat(pieces).toString('utf8');
      pieces = [];
      pieceBytes = 0;
      if (text === '') continue;
      const legacy = legacySeq(text);
      if (legacy !== undefined && legacy <= after && legacy > lastSeq) {
        lastSeq = legacy;
        continue;
      }
      const event = parseEventLine(text);
      if (event === undefined || event.seq <= lastSeq) {
        const why = event === undefined ? 'a line that is not an event' : `seq ${event.seq} after seq ${lastSeq}`;
        return { events, damage: { offset, afterSeq: lastSeq, message: `the session log is damaged at byte ${offset} (${why}): events after it cannot be served; repair or move the file` } };
      }
      lastSeq = event.seq;
      if (event.seq <= after) continue;
      if (events.length >= limit || (events.length > 0 && pageBytes + bytes > maxBytes)) {
        return { events, next: events[events.length - 1].seq };
      }
      events.push(event);
      pageBytes += bytes;
    }
    position += bytesRead;
  }
  // Whatever follows the last newline is a torn or in-progress line: not an event yet.
  return { events };
}

/**
 * A line start at or before the first line with `seq > after` (0 when in
 * doubt), found by bisecting the file on line seqs.
 */
async function seekAfter(fh: SinkFileHandle, size: number, after: number): Promise<number> {
  let lo = 0;
  let hi = size;
  while (hi - lo > SEARCH_SPAN) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const start = await nextLineStart(fh, mid, hi);
    if (start === undefined) {
      hi = mid;
      continue;
    }
    const head = Buffer.alloc(32);
    const { bytesRead } = await fh.read(head, 0, head.length, start);
    const seq = fastSeq(head.subarray(0, bytesRead));
    if (seq === undefined) break; // Another shape (or damage): stream from what is known.
    if (seq <= after) lo = start;
    else hi = mid;
  }
  return lo;
}

/** The offset just after the first newline at or after `from - 1` and before `end`, or undefined. */
async function nextLineStart(fh: SinkFileHandle, from: number, end: number): Promise<number | undefined> {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  let position = from - 1;
  while (position < end) {
    const { bytesRead } = await fh.read(buffer, 0, Math.min(buffer.length, end - position), position);
    if (bytesRead === 0) return undefined;
    const nl = buffer.subarray(0, bytesRead).indexOf(0x0a);
    if (nl >= 0) return position + nl + 1 < end ? position + nl + 1 : undefined;
    position += bytesRead;
  }
  return undefined;
}
