/**
 * A real `ptc serve` in a child process (the CLI, port 0, temp data dir and
 * workspace; spawned by test/helpers/serve-cli.ts), for the fault tests: its
 * URL, its exit, and the session logs it left on disk.
 */
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serveCli, type ServedCli } from '../helpers/serve-cli.ts';

export type CliServer = ServedCli;

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

/** `ptc serve` over `dirs`, warnings only, plus `extra`; `detached`: it leads a process group of its own (see serveCli). */
export function startCliServer(dirs: ServerDirs, extra: string[] = [], options: { detached?: boolean } = {}): Promise<CliServer> {
  return serveCli({
    cwd: dirs.base,
    args: ['--config', dirs.config, '--data', dirs.data, '--workspace', dirs.workspace, '--log-level', 'warn', ...extra],
    detached: options.detached,
  });
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

/** Stops servers still running (SIGTERM) and waits for every one to exit. */
export async function stopCliServers(servers: readonly CliServer[]): Promise<void> {
  for (const server of servers) {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
    await server.exited;
  }
}
