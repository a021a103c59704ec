/**
 * A real `ptc serve` in a child process (the CLI, port 0, temp data dir and
 * workspace), for the fault tests: its URL, its exit, and the session logs
 * it left on disk.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const NODE = path.join(root, 'node_modules/.bin/node');
const CLI = path.join(root, 'services/cli.ts');

export interface CliServer {
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code (or the signal name) once the process is gone. */
  exited: Promise<number | string>;
  stderr(): string;
}

export interface ServerDirs {
  base: string;
  data: string;
  workspace: string;
  config: string;
}

/** A temp base with a workspace (two files), a data dir, and a config without rate limits in the way. */
export async function serverDirs(config: object = {}): Promise<ServerDirs> {
  const base = await mkdtemp(path.join(tmpdir(), 'ptc-faults-'));
  const dirs = { base, data: path.join(base, 'data'), workspace: path.join(base, 'workspace'), config: path.join(base, 'ptc.config.json') };
  await writeFile(
    dirs.config,
    JSON.stringify({ rateLimit: { max: 1_000_000, timeWindow: 60_000 }, maxConcurrentRunsPerClient: 256, shutdownGraceMs: 10_000, ...config }),
  );
  return dirs;
}

/** `detached`: the server leads a process group of its own (with its sandbox children), for signals sent to the group. */
export async function startCliServer(dirs: ServerDirs, extra: string[] = [], options: { detached?: boolean } = {}): Promise<CliServer> {
  const child = spawn(
    NODE,
    ['--no-node-snapshot', CLI, 'serve', '--port', '0', '--config', dirs.config, '--data', dirs.data, '--workspace', dirs.workspace, '--log-level', 'warn', ...extra],
    { cwd: dirs.base, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached === true },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /ptc listening on (\S+)/.exec(out);
      if (match !== null) resolve(match[1]);
    });
    void exited.then((code) => reject(new Error(`ptc serve exited (${code}) before listening: ${stderr}`)));
  });
  return { url, child, exited, stderr: () => stderr };
}

export interface StoredEvent {
  type: string;
  sessionId: string;
  seq: number;
  callId: string;
  rootCallId?: string;
}

/** Every parseable line of every session file; a torn (unterminated or unparseable) last line is counted, not parsed. */
export async function readSessionFiles(data: string): Promise<{ events: StoredEvent[]; torn: number }> {
  const dir = path.join(data, 'sessions');
  const events: StoredEvent[] = [];
  let torn = 0;
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch {
    return { events, torn };
  }
  for (const name of names.filter((n) => n.endsWith('.jsonl'))) {
    const lines = (await readFile(path.join(dir, name), 'utf8')).split('\n');
    lines.forEach((line, i) => {
      if (line === '') return;
      try {
        events.push(JSON.parse(line) as StoredEvent);
      } catch (error) {
        if (i !== lines.length - 1) throw error;
        torn++;
      }
    });
  }
  return { events, torn };
}

/** `sessionId#seq#type` for matching a response's events against the log. */
export const eventKey = (event: { sessionId: string; seq: number; type: string }): string => `${event.sessionId}#${event.seq}#${event.type}`;
