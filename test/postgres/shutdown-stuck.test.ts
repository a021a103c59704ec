/**
 * A replica whose database stops answering still exits after SIGTERM: leaving the cluster waits on
 * PostgreSQL, and a paused server would keep it waiting for good. Past `shutdownGraceMs` and the
 * `shutdownMarginMs`, it exits with 1 and names the step that did not finish.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverDirs, startCliServer, type CliServer, stopCliServers } from '../security/cli-server.ts';
import { startTestDatabase, type TestDatabase } from './embedded.ts';

let pg: TestDatabase;
let paused = false;
const replicas: CliServer[] = [];

/** The postmaster and every backend it forked: an open connection's queries then wait, as do new connections. */
function signalDatabase(signal: 'STOP' | 'CONT'): void {
  const pid = pg.pid();
  execFileSync('pkill', [`-${signal}`, '-P', String(pid)]);
  process.kill(pid, `SIG${signal}`);
  paused = signal === 'STOP';
}

beforeAll(async () => {
  pg = await startTestDatabase();
}, 180_000);

afterAll(async () => {
  if (paused) signalDatabase('CONT');
  await stopCliServers(replicas);
  await pg?.destroy();
}, 60_000);

describe('shutdown with the database paused', () => {
  it('exits with 1 once its grace and margin are past, naming the step it was in', { timeout: 90_000 }, async () => {
    const replica = await startCliServer(await serverDirs({ shutdownGraceMs: 200, shutdownMarginMs: 1_000 }), ['--database-url', pg.url, '--runtime', 'in-process']);
    replicas.push(replica);
    signalDatabase('STOP');
    expect(await replica.stop('SIGTERM')).toBe(1);
    const log = `${replica.stdout()}${replica.stderr()}`;
    expect(log).toContain('shutdown did not finish within shutdownGraceMs + shutdownMarginMs (1000 ms)');
    expect(log).toContain('"step":"cluster"');
  });
});
