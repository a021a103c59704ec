/**
 * One replica's connection to PostgreSQL: a bounded pool for queries, one
 * more connection held for LISTEN (event wake-ups and cancels from other
 * replicas), and the database's health as `/readyz` and run admission see it.
 *
 * Trouble is visible, not a hang: connecting gives up after a few seconds,
 * every statement has a timeout, a failed query marks the database down
 * (new runs are refused at once), and the next successful query or probe
 * marks it up again, without a restart. The LISTEN connection reconnects on
 * its own and tells its subscribers to re-read what they may have missed.
 */
import pg from 'pg';
import { migrate } from './migrate.ts';

export type DatabaseHealth = { ok: true } | { ok: false; code: string; message: string };

/** A notification: `channel` is one of {@link CHANNELS}, `payload` as sent. */
export type NotificationListener = (channel: string, payload: string) => void;

export const CHANNELS = { events: 'ptc_events', cancel: 'ptc_cancel' } as const;

export interface Database {
  readonly pool: pg.Pool;
  /**
   * Runs a statement; a connection failure marks the database down until a statement succeeds again.
   * `name`: a prepared statement, parsed and planned once per connection (the hot path: appends, run rows).
   */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[], name?: string): Promise<pg.QueryResult<R>>;
  /** Whether the last statement or probe reached the database (no I/O). */
  available(): boolean;
  /** Probes with `SELECT 1` when the last statement failed (at most once a second). */
  health(): Promise<DatabaseHealth>;
  /** Calls `listener` for every notification; `onReconnect` after the LISTEN connection came back (messages may have been missed). Returns unsubscribe. */
  subscribe(listener: NotificationListener, onReconnect?: () => void): () => void;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  /** Connect timeout, ms. Default 3,000. */
  connectTimeoutMs?: number;
  /** Statement timeout, ms. Default 15,000. */
  statementTimeoutMs?: number;
  /** Where LISTEN-connection problems are reported. */
  onWarning?: (message: string, error: unknown) => void;
}

const PROBE_INTERVAL_MS = 1_000;
const RELISTEN_MS = 500;

/** Connects, runs the migrations, and starts listening. Throws when the database cannot be reached at start. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const connectionTimeoutMillis = options.connectTimeoutMs ?? 3_000;
  const statementTimeout = options.statementTimeoutMs ?? 15_000;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    connectionTimeoutMillis,
    statement_timeout: statementTimeout,
    query_timeout: statementTimeout + 1_000,
    idleTimeoutMillis: 30_000,
    application_name: 'ptc-executor',
  });
  // An idle client's connection broke (the server restarted): the pool drops it; the next query says more.
  pool.on('error', (error) => markDown(error));
  let failure: { code: string; message: string } | undefined;
  let lastProbe = 0;
  let closed = false;

  function markDown(error: unknown): void {
    const code = (error as { code?: string } | undefined)?.code ?? 'DATABASE_ERROR';
    failure = { code, message: `PostgreSQL is unreachable or failing (${code})` };
  }

  async function query<R extends pg.QueryResultRow>(text: string, values?: unknown[], name?: string): Promise<pg.QueryResult<R>> {
    try {
      const result = await pool.query<R>(name === undefined ? { text, values } : { name, text, values });
      failure = undefined;
      return result;
    } catch (error) {
      if (isConnectionError(error)) markDown(error);
      throw error;
    }
  }

  await migrate(pool).catch(async (error: unknown) => {
    await pool.end().catch(() => undefined);
    throw error;
  });

  const listeners = new Set<{ listener: NotificationListener; onReconnect?: () => void }>();
  let listenClient: pg.Client | undefined;
  let relisten: NodeJS.Timeout | undefined;
  let everListened = false;

  async function listen(): Promise<void> {
    if (closed) return;
    const client = new pg.Client({ connectionString: options.url, connectionTimeoutMillis, application_name: 'ptc-executor-listen' });
    const retry = (error: unknown) => {
      if (listenClient === client) listenClient = undefined;
      client.removeAllListeners();
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
      if (closed) return;
      markDown(error);
      options.onWarning?.('the LISTEN connection to PostgreSQL failed; reconnecting', error);
      relisten ??= setTimeout(() => {
        relisten = undefined;
        void listen();
      }, RELISTEN_MS);
    };
    client.on('error', retry);
    client.on('end', () => retry(Object.assign(new Error('connection ended'), { code: 'ECONNRESET' })));
    client.on('notification', (message) => {
      for (const { listener } of listeners) {
        try {
          listener(message.channel, message.payload ?? '');
        } catch {
          // A subscriber (an HTTP stream) never breaks the others.
        }
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNELS.events}; LISTEN ${CHANNELS.cancel}`);
    } catch (error) {
      retry(error);
      return;
    }
    if (closed) {
      await client.end().catch(() => undefined);
      return;
    }
    listenClient = client;
    if (everListened) for (const { onReconnect } of listeners) onReconnect?.();
    everListened = true;
  }
  await listen();

  return {
    pool,
    query,
    available: () => failure === undefined,
    async health() {
      if (failure !== undefined && Date.now() - lastProbe >= PROBE_INTERVAL_MS) {
        lastProbe = Date.now();
        await query('SELECT 1').catch(() => undefined);
      }
      return failure === undefined ? { ok: true } : { ok: false, ...failure };
    },
    subscribe(listener, onReconnect) {
      const entry = { listener, onReconnect };
      listeners.add(entry);
      return () => listeners.delete(entry);
    },
    async close() {
      if (closed) return;
      closed = true;
      if (relisten !== undefined) clearTimeout(relisten);
      const client = listenClient;
      listenClient = undefined;
      if (client !== undefined) {
        client.removeAllListeners();
        client.on('error', () => undefined);
        await client.end().catch(() => undefined);
      }
      await pool.end();
    },
  };
}

/** Errors that mean "cannot talk to the database" (as opposed to a bad statement). */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') {
    // Class 08: connection exception; 57P01-03: admin shutdown, crash shutdown, cannot connect now.
    if (code.startsWith('08') || code.startsWith('57P')) return true;
    if (/^E[A-Z]+$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, ETIMEDOUT, EPIPE, …
  }
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection/i.test(message);
}
