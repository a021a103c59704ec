/**
 * `GET /v1/sessions/:id/events` with `Accept: text/event-stream`: the log
 * from `after` on, then every event as it is committed, until the client
 * leaves. A wake-up (LISTEN/NOTIFY with a database, the local flush without
 * one) only says "read again": the stream reads the log itself, in pages,
 * so it never skips, repeats or reorders an event, whoever appended it.
 * It reads no further while the client has not taken what it was sent
 * (services/outbound.ts closes a client that stalls).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EventPage, SessionLogEvent } from '../src/events.ts';
import { HttpError } from './http-errors.ts';
import { outboundFull, type Outbound } from './outbound.ts';
import { openEventStream } from './sse.ts';

/** Live followers per replica; past it 503 (each holds a socket and a subscription). */
export const MAX_FOLLOWERS = 256;

export type SessionFollow = (sessionId: string, onWake: () => void) => () => void;

export interface FollowOptions {
  sessionId: string;
  after: number;
  limit: number;
  read(after: number, limit: number): Promise<EventPage>;
  follow: SessionFollow;
  /** The event as the client sees it (tenant ids). */
  show(event: SessionLogEvent): SessionLogEvent;
  outbound: Outbound;
}

let followers = 0;

export function followSessionEvents(request: FastifyRequest, reply: FastifyReply, options: FollowOptions): FastifyReply {
  if (followers >= MAX_FOLLOWERS) {
    throw new HttpError('UNDER_PRESSURE', `this replica already streams ${MAX_FOLLOWERS} sessions: retry after the Retry-After seconds, or page with ?after=`, { 'retry-after': '5' });
  }
  if (options.outbound.full()) throw outboundFull();
  followers++;
  let last = options.after;
  let woken = true;
  let pumping = false;
  let done = false;
  const stream = openEventStream(reply, options.outbound);
  const unsubscribe = options.follow(options.sessionId, () => {
    woken = true;
    void pump();
  });
  const finish = () => {
    if (done) return;
    done = true;
    followers--;
    unsubscribe();
    stream.end();
  };
  request.raw.on('close', finish);
  reply.raw.on('close', finish);

  async function pump(): Promise<void> {
    if (pumping || done) return;
    pumping = true;
    try {
      while (woken && !done) {
        woken = false;
        for (let more = true; more && !done; ) {
          const page = await options.read(last, options.limit);
          for (const event of page.events) {
            if (done) break;
            last = event.seq;
            if (!stream.send(event.type, options.show(event))) await stream.room();
          }
          if (!stream.open) finish();
          more = page.next !== undefined;
          if (page.damage !== undefined) {
            stream.send('error', { code: 'EVENT_LOG_UNAVAILABLE', message: page.damage.message });
            finish();
          }
        }
      }
    } catch (error) {
      // The database or disk is failing: say so and let the client resume with ?after= the last id it saw.
      request.log.warn({ err: error, sessionId: options.sessionId }, 'a live follow could not read the session log');
      stream.send('error', { code: 'EVENT_LOG_UNAVAILABLE', message: `the log cannot be read right now: reconnect with ?after=${last}` });
      finish();
    } finally {
      pumping = false;
    }
  }
  void pump();
  return reply;
}

