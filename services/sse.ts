/**
 * A Server-Sent Events stream over a hijacked Fastify reply, metered by the
 * service's outbound bounds (services/outbound.ts).
 */
import type { FastifyReply } from 'fastify';
import { isHighSurrogate, type Outbound } from './outbound.ts';

export interface EventStream {
  /** Writes one event. False when the client should be given no more until {@link room} (or is gone). */
  send(event: string, data: unknown): boolean;
  /** Writes one event of any size in slices, each once the client has taken the one before. */
  sendPaced(event: string, data: unknown): Promise<void>;
  /** Resolves once the client has taken what it was sent (or left). */
  room(): Promise<void>;
  /** Whether the client is still connected. */
  readonly open: boolean;
  end(): void;
}

/** Comment lines keep idle proxies from closing a long run's stream, ms. */
const HEARTBEAT_MS = 15_000;
/** One write of a paced event, characters. */
const PACED_SLICE_CHARS = 64 * 1024;

export function openEventStream(reply: FastifyReply, outbound: Outbound): EventStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  raw.flushHeaders();
  const connection = outbound.connection(raw);
  const heartbeat = setInterval(() => connection.write(': keep-alive\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  raw.once('close', () => clearInterval(heartbeat));
  return {
    send(event, data) {
      return connection.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    async sendPaced(event, data) {
      const text = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
      for (let offset = 0; offset < text.length && connection.open; ) {
        let end = Math.min(text.length, offset + PACED_SLICE_CHARS);
        // Never split a surrogate pair across two writes.
        if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
        if (!connection.write(text.slice(offset, end))) await connection.room();
        offset = end;
      }
    },
    room: () => connection.room(),
    get open() {
      return connection.open;
    },
    end() {
      clearInterval(heartbeat);
      if (connection.open) raw.end();
    },
  };
}
