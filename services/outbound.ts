/**
 * Bounded output: what the service has handed to client sockets and they have
 * not taken yet. A client that stops reading would otherwise keep every byte
 * written to it in this process's memory, so:
 *
 * - each connection holds at most `maxConnectionBytes` unsent; a stream whose
 *   events arrive faster than its client reads is closed past it;
 * - writers that can wait (a live follow reading pages, a large body) wait
 *   for the socket to drain before producing more;
 * - a connection that has not taken any of its unsent bytes for
 *   `writeStallMs` is closed;
 * - past `maxTotalBytes` unsent in all, new heavy responses are refused
 *   (`full()`), and never pile up.
 */
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { HttpError } from './http-errors.ts';

export interface OutboundLimits {
  /** A connection with unsent bytes that has taken none of them for this long is closed, ms. Default 30,000. */
  writeStallMs: number;
  /** Unsent bytes one connection may hold; a stream past it is closed. Default 8 MiB. */
  maxConnectionBytes: number;
  /** Unsent bytes of every connection together; past it new heavy responses get 503. Default 256 MiB. */
  maxTotalBytes: number;
}

export const DEFAULT_OUTBOUND_LIMITS: Readonly<OutboundLimits> = Object.freeze({
  writeStallMs: 30_000,
  maxConnectionBytes: 8 * 1024 * 1024,
  maxTotalBytes: 256 * 1024 * 1024,
});

/** Bodies larger than this are sent slice by slice, as the client takes them. */
export const HEAVY_BODY_BYTES = 64 * 1024;
/** One slice of a large body (characters). */
const SLICE_CHARS = 64 * 1024;
/** One slice of a piped message (bytes). */
const SLICE_BYTES = 64 * 1024;

/** One connection's writer for a hijacked response (an SSE stream). */
export interface OutboundConnection {
  /** Writes now. False when the connection is gone or should not be given more until {@link room}; past `maxConnectionBytes` it is closed. */
  write(chunk: string | Uint8Array): boolean;
  /** Resolves once the socket drained (and the total is under its cap), or the connection closed. */
  room(): Promise<void>;
  /** Whether the connection still takes writes. */
  readonly open: boolean;
}

export interface Outbound {
  readonly limits: Readonly<OutboundLimits>;
  /** Unsent bytes of every connection. */
  bytes(): number;
  /** True while the total is at its cap: start no new heavy response. */
  full(): boolean;
  /** Meters writes to `res` (a hijacked response). */
  connection(res: ServerResponse): OutboundConnection;
  /** A large body as a stream that hands the socket one slice at a time; counted until sent, closed on a stall. */
  body(res: ServerResponse, payload: string | Buffer): Readable;
  /**
   * Sends a stream of messages (an MCP transport's response body, one
   * message a chunk) to `res`, a slice at a time as the client takes it.
   * Each message counts from when it is produced until the socket took it;
   * past `maxConnectionBytes` waiting behind the one being sent, or on a
   * stall, `res` is closed and `source` cancelled. Resolves once `res` ended or closed.
   */
  pipe(res: ServerResponse, source: ReadableStream<Uint8Array>): Promise<void>;
}

export function createOutbound(partial: Partial<OutboundLimits> = {}): Outbound {
  const limits: OutboundLimits = { ...DEFAULT_OUTBOUND_LIMITS, ...definedOnly(partial) };
  for (const [key, value] of Object.entries(limits)) {
    if (!(Number.isSafeInteger(value) && value > 0)) throw new RangeError(`${key} must be a positive integer (got ${String(value)})`);
  }
  let total = 0;
  /** Writers waiting for the total to fall under its cap. */
  const waiting = new Set<() => void>();
  const release = (n: number) => {
    total -= n;
    if (total < limits.maxTotalBytes) for (const wake of [...waiting]) wake();
  };

  /** A timer that closes `res` unless progress refreshes it. */
  function stallGuard(res: ServerResponse): { arm(): void; progress(): void; disarm(): void } {
    let timer: NodeJS.Timeout | undefined;
    return {
      arm() {
        if (timer === undefined) {
          timer = setTimeout(() => res.destroy(), limits.writeStallMs);
          timer.unref();
        }
      },
      progress() {
        timer?.refresh();
      },
      disarm() {
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
      },
    };
  }

  return {
    limits,
    bytes: () => total,
    full: () => total >= limits.maxTotalBytes,

    connection(res) {
      let pending = 0;
      let closed = false;
      const stall = stallGuard(res);
      const onClose = () => {
        if (closed) return;
        closed = true;
        stall.disarm();
        release(pending);
        pending = 0;
      };
      res.once('close', onClose);
      const writable = () => !closed && !res.writableEnded && !res.destroyed;
      return {
        get open() {
          return writable();
        },
        write(chunk) {
          if (!writable()) return false;
          const n = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
          pending += n;
          total += n;
          stall.arm();
          res.write(chunk, () => {
            if (closed) return;
            pending -= n;
            release(n);
            if (pending === 0) stall.disarm();
            else stall.progress();
          });
          if (pending > limits.maxConnectionBytes) {
            // The client reads slower than its stream produces: drop it rather than hold its backlog.
            res.destroy();
            return false;
          }
          return !res.writableNeedDrain && total < limits.maxTotalBytes;
        },
        async room() {
          await drained(res);
          while (writable() && total >= limits.maxTotalBytes) await totalRoom(res);
        },
      };
    },

    body(res, payload) {
      const text = typeof payload === 'string' ? payload : undefined;
      const buffer = typeof payload === 'string' ? undefined : payload;
      const length = text?.length ?? buffer!.length;
      let unsent = Buffer.byteLength(payload);
      total += unsent;
      let offset = 0;
      const stall = stallGuard(res);
      const done = () => {
        stall.disarm();
        release(unsent);
        unsent = 0;
      };
      stall.arm();
      return new Readable({
        // Each slice is made when the socket asks for more, so the body stays in one piece until it is sent.
        read() {
          stall.progress();
          if (offset >= length) {
            this.push(null);
            return;
          }
          let end = Math.min(length, offset + SLICE_CHARS);
          let slice: Buffer;
          if (text !== undefined) {
            // Never split a surrogate pair across two slices.
            if (end < length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
            slice = Buffer.from(text.slice(offset, end), 'utf8');
          } else {
            slice = buffer!.subarray(offset, end);
          }
          offset = end;
          unsent -= slice.length;
          release(slice.length);
          this.push(slice);
        },
        destroy(error, callback) {
          done();
          callback(error);
        },
      }).once('end', done);
    },

    async pipe(res, source) {
      const out = this.connection(res);
      const reader = source.getReader();
      // Messages read from `source` and not yet handed to the socket: counted in the total, so a client that stops reading cannot hide them.
      const held: Uint8Array[] = [];
      let heldBytes = 0;
      let offset = 0;
      let sourceDone = false;
      let wake: (() => void) | undefined;
      const nudge = () => {
        wake?.();
        wake = undefined;
      };
      const onClose = () => {
        release(heldBytes);
        heldBytes = 0;
        held.length = 0;
        reader.cancel().catch(() => undefined);
        nudge();
      };
      res.once('close', onClose);

      const readAll = async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done || !out.open) break;
            const behind = heldBytes - (held.length === 0 ? 0 : held[0]!.byteLength - offset) + value.byteLength;
            if (held.length > 0 && behind > limits.maxConnectionBytes) {
              // Messages arrive faster than the client takes them: drop it rather than hold its backlog.
              res.destroy();
              break;
            }
            held.push(value);
            heldBytes += value.byteLength;
            total += value.byteLength;
            nudge();
          }
        } catch {
          // The source failed or was cancelled: what was read still goes out.
        } finally {
          sourceDone = true;
          nudge();
        }
      };
      const writeAll = async () => {
        for (;;) {
          if (!out.open) return;
          const chunk = held[0];
          if (chunk === undefined) {
            if (sourceDone) return;
            await new Promise<void>((resolve) => (wake = resolve));
            continue;
          }
          const end = Math.min(chunk.byteLength, offset + SLICE_BYTES);
          const slice = chunk.subarray(offset, end);
          offset = end;
          if (offset === chunk.byteLength) {
            held.shift();
            offset = 0;
          }
          heldBytes -= slice.byteLength;
          release(slice.byteLength);
          if (!out.write(slice)) await drained(res);
        }
      };
      try {
        await Promise.all([readAll(), writeAll()]);
        if (out.open) res.end();
      } finally {
        res.off('close', onClose);
        if (!out.open) onClose();
      }
    },
  };

  function totalRoom(res: ServerResponse): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        waiting.delete(wake);
        res.off('close', wake);
        resolve();
      };
      waiting.add(wake);
      res.once('close', wake);
    });
  }
}

/** Resolves once `res` has taken its buffered bytes (or closed). */
async function drained(res: ServerResponse): Promise<void> {
  if (res.writableEnded || res.destroyed || !res.writableNeedDrain) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function definedOnly<T extends object>(partial: Partial<T>): Partial<T> {
  return Object.fromEntries(Object.entries(partial).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** 503 while clients hold the outbound cap in unsent bytes: a new heavy response would add to it. */
export function outboundFull(): HttpError {
  return new HttpError(
    'UNDER_PRESSURE',
    'clients have not yet taken the responses already sent to them (maxOutboundMiB): retry after the Retry-After seconds',
    { 'retry-after': '5' },
  );
}
