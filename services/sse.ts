/**
 * A Server-Sent Events stream over a hijacked Fastify reply.
 */
import type { FastifyReply } from 'fastify';

export interface EventStream {
  send(event: string, data: unknown): void;
  end(): void;
}

/** Comment lines keep idle proxies from closing a long run's stream, ms. */
const HEARTBEAT_MS = 15_000;

export function openEventStream(reply: FastifyReply): EventStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  raw.flushHeaders();
  const writable = () => !raw.writableEnded && !raw.destroyed;
  const heartbeat = setInterval(() => {
    if (writable()) raw.write(': keep-alive\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return {
    send(event, data) {
      if (writable()) raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    end() {
      clearInterval(heartbeat);
      if (writable()) raw.end();
    },
  };
}
