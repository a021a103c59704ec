/**
 * Session events in PostgreSQL, shared by every replica: the same event
 * shapes and reader contract as the JSONL sink (`append`, `flush`,
 * `readPage`, `health`).
 *
 * Order: `seq` comes from a per-session counter row bumped in the same
 * statement that inserts the event, so the row lock serialises appenders on
 * all replicas and a failed insert rolls the bump back: per session, seqs
 * are strictly increasing with no gap and no duplicate. Within one replica,
 * appends of a session are chained so they get seqs in call order.
 *
 * Durability: an append resolves once its statement committed; `flush`
 * waits for the session's chain and rejects if an append since the last
 * flush was lost (the database was unreachable): no `log/gap` is needed,
 * since a lost event never took a seq.
 *
 * Each insert notifies `ptc_events` with `<sessionId>` at commit, which
 * wakes live followers on every replica.
 */
import type { EventPage, EventSink, NewToolEvent, ReadPageOptions, SessionLogEvent, ToolEvent } from '../../src/events.ts';
import { DEFAULT_PAGE_BYTES, DEFAULT_PAGE_LIMIT } from '../../src/events.ts';
import { isoClock } from '../../src/event-sinks/iso-clock.ts';
import { SESSION_ID_PATTERN } from '../../src/event-sinks/jsonl-sink.ts';
import { CHANNELS, type Database, type DatabaseHealth } from './database.ts';

export interface PostgresEventSink extends EventSink {
  append(event: NewToolEvent): Promise<ToolEvent>;
  flush(sessionId: string): Promise<void>;
  readPage(sessionId: string, options?: ReadPageOptions): Promise<EventPage>;
  health(): Promise<DatabaseHealth>;
  /** Calls `onWake` whenever an event of `sessionId` was committed (by any replica), and after the LISTEN connection was lost and came back. */
  follow(sessionId: string, onWake: () => void): () => void;
  /** Waits for every pending append. Later appends throw. */
  close(): Promise<void>;
}

/** An append was not stored: the database was unreachable or refused it. */
export class DatabaseEventError extends Error {
  override name = 'DatabaseEventError';
  readonly code = 'EVENT_LOG_FAILED' as const;
}

const APPEND = `
WITH s AS (
  INSERT INTO ptc_sessions AS s (session_id, last_seq, bytes, changed_at) VALUES ($1, 1, octet_length($2), now())
  ON CONFLICT (session_id) DO UPDATE SET last_seq = s.last_seq + 1, bytes = s.bytes + octet_length($2), changed_at = now()
  RETURNING last_seq
), e AS (
  INSERT INTO ptc_events (session_id, seq, event) SELECT $1, last_seq, $2 FROM s RETURNING seq
)
SELECT seq, pg_notify('${CHANNELS.events}', $1) FROM e`;

const PAGE = 'SELECT seq, event FROM ptc_events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3';

interface Chain {
  tail: Promise<unknown>;
  pending: number;
  /** The first append lost since the last flush. */
  lost: unknown;
}

export function createPostgresEventSink(db: Database): PostgresEventSink {
  const clock = isoClock();
  const chains = new Map<string, Chain>();
  let closed = false;

  function check(sessionId: string): void {
    if (typeof sessionId !== 'string' || !SESSION_ID_PATTERN.test(sessionId)) {
      throw new RangeError(`session id ${JSON.stringify(String(sessionId)).slice(0, 140)} is not valid: use 1–128 of A–Z a–z 0–9 _ -`);
    }
  }

  async function insert(event: NewToolEvent): Promise<ToolEvent> {
    const { seq: _seq, at: _at, ...plain } = event as NewToolEvent & { seq?: unknown; at?: unknown };
    let body: Record<string, unknown> = { at: clock(), ...plain };
    let text: string;
    try {
      text = JSON.stringify(body);
    } catch (error) {
      body = withoutContent(body, error);
      text = JSON.stringify(body);
    }
    const result = await db.query<{ seq: string }>(APPEND, [event.sessionId, text], 'ptc_append');
    return Object.freeze({ seq: Number(result.rows[0].seq), ...body }) as unknown as ToolEvent;
  }

  return {
    append(event) {
      if (closed) return Promise.reject(new Error('the PostgreSQL event sink is closed'));
      try {
        check(event.sessionId);
      } catch (error) {
        return Promise.reject(error);
      }
      let chain = chains.get(event.sessionId);
      if (chain === undefined) chains.set(event.sessionId, (chain = { tail: Promise.resolve(), pending: 0, lost: undefined }));
      const c = chain;
      c.pending++;
      const stamped = c.tail.then(() => insert(event));
      c.tail = stamped.then(
        () => undefined,
        (error: unknown) => {
          c.lost ??= error;
        },
      ).finally(() => {
        c.pending--;
        if (c.pending === 0 && c.lost === undefined && chains.get(event.sessionId) === c) chains.delete(event.sessionId);
      });
      return stamped.catch((error: unknown) => {
        throw new DatabaseEventError(`event of session ${event.sessionId} not stored: PostgreSQL failed (${codeOf(error)})`, { cause: error });
      });
    },

    async flush(sessionId) {
      const c = chains.get(sessionId);
      if (c === undefined) return;
      await c.tail;
      if (c.lost !== undefined) {
        const lost = c.lost;
        c.lost = undefined;
        if (c.pending === 0 && chains.get(sessionId) === c) chains.delete(sessionId);
        throw new DatabaseEventError(`events of session ${sessionId} were not stored: PostgreSQL failed (${codeOf(lost)})`, { cause: lost });
      }
    },

    async readPage(sessionId, options = {}) {
      check(sessionId);
      const after = options.after ?? 0;
      const limit = Math.max(1, options.limit ?? DEFAULT_PAGE_LIMIT);
      const maxBytes = options.maxBytes ?? DEFAULT_PAGE_BYTES;
      const { rows } = await db.query<{ seq: string; event: string }>(PAGE, [sessionId, after, limit + 1], 'ptc_page');
      const events: SessionLogEvent[] = [];
      let bytes = 0;
      for (const row of rows) {
        if (events.length >= limit || (events.length > 0 && bytes + row.event.length > maxBytes)) {
          return { events, next: events[events.length - 1].seq };
        }
        events.push({ seq: Number(row.seq), ...(JSON.parse(row.event) as object) } as SessionLogEvent);
        bytes += row.event.length;
      }
      return { events };
    },

    health: () => db.health(),

    follow(sessionId, onWake) {
      return db.subscribe(
        (channel, payload) => {
          if (channel === CHANNELS.events && payload === sessionId) onWake();
        },
        onWake,
      );
    },

    async close() {
      closed = true;
      await Promise.all([...chains.values()].map((c) => c.tail));
    },
  };
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'DATABASE_ERROR';
}

function withoutContent(body: Record<string, unknown>, error: unknown): Record<string, unknown> {
  const why = `[not stored: the event could not be serialised (${error instanceof Error ? error.message : 'unknown error'})]`;
  if (body.type === 'tool/ptc-dispatch-start') return { ...body, arguments: { truncated: why } };
  const { error: _error, ...rest } = body;
  return { ...rest, content: [{ type: 'text', text: why }] };
}
