/**
 * Three real `ptc serve` processes on one PostgreSQL: one ordered log per
 * session whoever appends, cancels and live follows across replicas, a
 * SIGKILLed replica's run marked lost, and a database restart under load.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverDirs, startCliServer, type CliServer, stopCliServers } from '../security/cli-server.ts';
import { startTestDatabase, type TestDatabase } from './embedded.ts';
import { openSse } from './sse-reader.ts';

let pg: TestDatabase;
let replicas: CliServer[] = [];

beforeAll(async () => {
  pg = await startTestDatabase();
  replicas = await Promise.all(
    [0, 1, 2].map(async () => startCliServer(await serverDirs({ shutdownGraceMs: 2_000 }), ['--database-url', pg.url, '--runtime', 'in-process'])),
  );
}, 180_000);

afterAll(async () => {
  await stopCliServers(replicas);
  await pg?.destroy();
}, 60_000);

interface RunBody {
  callId: string;
  isError: boolean;
  error?: { info?: { code?: string } };
  value?: { result?: unknown };
}

async function run(replica: CliServer, body: object): Promise<{ status: number; body: RunBody & { code?: string } }> {
  const response = await fetch(`${replica.url}/v1/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as RunBody & { code?: string } };
}

interface LogEvent {
  seq: number;
  type: string;
  callId: string;
  isError?: boolean;
  error?: { info?: { code?: string } };
}

async function readLog(replica: CliServer, sessionId: string): Promise<LogEvent[]> {
  const events: LogEvent[] = [];
  for (let after: number | undefined = 0; after !== undefined; ) {
    const response = await fetch(`${replica.url}/v1/sessions/${sessionId}/events?after=${after}&limit=7`);
    expect(response.status).toBe(200);
    const page = (await response.json()) as { events: LogEvent[]; next?: number };
    events.push(...page.events);
    after = page.next;
  }
  return events;
}

async function runState(replica: CliServer, callId: string): Promise<{ status: number; body: { state?: string; replica?: string; endedAt?: string } }> {
  const response = await fetch(`${replica.url}/v1/runs/${callId}`);
  return { status: response.status, body: (await response.json()) as { state?: string } };
}

/** Until `check` holds; each round waits for a real answer from a replica, never a timer. */
async function eventually<T>(probe: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await probe();
    if (check(value)) return value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const NESTED_LOOP = 'for (let i = 0; ; i++) { await tools.glob({ pattern: "*" }); }';

describe('three replicas on one PostgreSQL', () => {
  it('gives one ordered log without gap or duplicate for runs of one session spread over all three', async () => {
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) => run(replicas[i % 3], { sessionId: 'spread', callId: `spread-${i}`, code: 'await tools.glob({ pattern: "*" }); return 1;' })),
    );
    for (const result of results) expect(result.body).toMatchObject({ isError: false });
    const logs = await Promise.all(replicas.map((replica) => readLog(replica, 'spread')));
    expect(logs[1]).toEqual(logs[0]);
    expect(logs[2]).toEqual(logs[0]);
    // 24 runs × (dispatch-start, dispatch, result).
    expect(logs[0].map((e) => e.seq)).toEqual(Array.from({ length: 72 }, (_, i) => i + 1));
    const finals = logs[0].filter((e) => e.type === 'tool/result').map((e) => e.callId);
    expect(new Set(finals).size).toBe(24);
    const states = await Promise.all(results.map((r, i) => runState(replicas[(i + 1) % 3], r.body.callId)));
    for (const state of states) expect(state.body.state).toBe('ok');
  });

  it('cancels through replica B a run on replica A, while a follower on C sees A’s nested calls live', async () => {
    const follower = await openSse(`${replicas[2].url}/v1/sessions/cancelled/events`);
    const running = run(replicas[0], { sessionId: 'cancelled', callId: 'long-a', code: NESTED_LOOP, timeoutMs: 600_000 });
    await follower.until((e) => e.event === 'tool/ptc-dispatch' && e.data.rootCallId === 'long-a');
    expect((await runState(replicas[1], 'long-a')).body.state).toBe('running');
    const cancel = await fetch(`${replicas[1].url}/v1/runs/long-a`, { method: 'DELETE' });
    expect(cancel.status).toBe(202);
    const { body } = await running;
    expect(body.isError).toBe(true);
    const final = await follower.until((e) => e.event === 'tool/result' && e.data.callId === 'long-a');
    expect(final.data.isError).toBe(true);
    follower.close();
    const state = await runState(replicas[2], 'long-a');
    expect(state.body.state).toBe('cancelled');
    expect(state.body.endedAt).toBeDefined();
  });

  it('marks a SIGKILLed replica’s run lost, closes its log with a failed result, and keeps serving', async () => {
    const follower = await openSse(`${replicas[1].url}/v1/sessions/killed/events`);
    void run(replicas[0], { sessionId: 'killed', callId: 'doomed', code: NESTED_LOOP, timeoutMs: 600_000 }).catch(() => undefined);
    await follower.until((e) => e.event === 'tool/ptc-dispatch' && e.data.rootCallId === 'doomed');
    replicas[0].child.kill('SIGKILL');
    await replicas[0].exited;
    const lost = await follower.until((e) => e.event === 'tool/result' && e.data.callId === 'doomed');
    follower.close();
    expect(lost.data).toMatchObject({ isError: true, error: { info: { code: 'RUN_LOST' } } });
    expect((await runState(replicas[2], 'doomed')).body.state).toBe('lost');
    const log = await readLog(replicas[2], 'killed');
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: log.length }, (_, i) => i + 1));
    expect(log.at(-1)).toMatchObject({ type: 'tool/result', callId: 'doomed', isError: true });
    expect((await run(replicas[1], { sessionId: 'killed', code: 'return 2' })).body.value?.result).toBe(2);
  }, 60_000);

  it('fails fast while the database is restarted under load, then recovers without a restart', async () => {
    const [, b, c] = replicas;
    const statuses: number[] = [];
    let loading = true;
    const load = Promise.all(
      [b, c, b, c].map(async (replica) => {
        while (loading) statuses.push((await run(replica, { sessionId: 'outage', code: 'return 1' })).status);
      }),
    );
    await eventually(async () => statuses.filter((s) => s === 200).length, (n) => n >= 4);
    await pg.stop();
    const down = await eventually(() => run(b, { sessionId: 'outage', code: 'return 1' }), (r) => r.status === 503);
    expect(down.body.code).toBe('DATABASE_UNAVAILABLE');
    expect((await fetch(`${c.url}/readyz`)).status).toBe(503);
    await pg.start();
    await eventually(() => fetch(`${c.url}/readyz`).then((r) => r.status), (status) => status === 200);
    const after = await eventually(() => run(b, { sessionId: 'outage', code: 'return 3' }), (r) => r.status === 200);
    expect(after.body.value?.result).toBe(3);
    const recovered = statuses.length;
    await eventually(async () => statuses.slice(recovered).filter((s) => s === 200).length, (n) => n >= 4);
    loading = false;
    await load;
    // Only answers and fast refusals: no hang, no 500.
    expect(new Set(statuses)).toEqual(new Set([200, 503]));
    const log = await readLog(c, 'outage');
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: log.length }, (_, i) => i + 1));
  }, 60_000);

  it('drains on SIGTERM: the run in flight finishes ok and nothing is marked lost', async () => {
    const [, b, c] = replicas;
    const follower = await openSse(`${b.url}/v1/sessions/drained/events`);
    const running = run(c, { sessionId: 'drained', callId: 'draining', code: 'for (let i = 0; i < 20; i++) await tools.glob({ pattern: "*" }); return 20;' });
    await follower.until((e) => e.event === 'tool/ptc-dispatch' && e.data.rootCallId === 'draining');
    c.child.kill('SIGTERM');
    const { status, body } = await running;
    expect(status).toBe(200);
    expect(body.value?.result).toBe(20);
    expect(await c.exited).toBe(0);
    // Ended `ok` before the replica left: the reaper only ever touches `running` runs.
    expect((await runState(b, 'draining')).body.state).toBe('ok');
    const final = await follower.until((e) => e.event === 'tool/result' && e.data.callId === 'draining');
    expect(final.data.isError).toBe(false);
    follower.close();
  }, 60_000);
});
