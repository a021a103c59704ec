/**
 * A real `ptc serve` in a child process, for the tests and benches that drive
 * the service from outside: spawns the CLI on port 0, waits for the line
 * `ptc listening on <url>` it prints once it listens, and hands back the URL,
 * the child, its exit and the tails of its output. A server that exits before
 * listening rejects with its exit and the tail of its stderr.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { GUEST_FREEZE_FLAGS } from '../../sandbox/guest-tiering.ts';
import { ISOLATE_HOST_FLAGS } from '../../sandbox/host-flags.ts';

const root = path.resolve(import.meta.dirname, '../..');
const NODE = path.join(root, 'node_modules/.bin/node');
const CLI = path.join(root, 'services/cli.ts');

/**
 * The Node flags services/cli.ts adds by re-executing itself when one is missing. Given up front,
 * the CLI starts in one Node process instead of two; test/services/cli.test.ts starts it without
 * them, to see it add them.
 */
export const CLI_NODE_FLAGS: readonly string[] = [...ISOLATE_HOST_FLAGS, '--max-semi-space-size=16', ...GUEST_FREEZE_FLAGS];

/** How much of each output stream is kept: the server logs to stdout for as long as it runs (a soak: minutes). */
const KEPT_CHARS = 64 * 1024;
/** How much of its stderr the error for a server that exited before listening quotes. */
const QUOTED_CHARS = 4 * 1024;

/** Printed by `ptc serve` once it listens; the newline marks the URL complete (a chunk may end inside it). */
const LISTENING = /ptc listening on (\S+)\r?\n/;

export interface ServeCliOptions {
  /** The server's working directory (where it looks for `ptc.config.json` and keeps `.ptc/`). */
  cwd: string;
  /** Arguments after `serve --port 0`. */
  args?: readonly string[];
  /** The CLI to start; default this repository's services/cli.ts (an installed package's bin, for example). */
  cli?: string;
  /** Node flags before the CLI; default `CLI_NODE_FLAGS` (the CLI adds those it needs and lacks by re-executing itself). */
  nodeFlags?: readonly string[];
  /** The child's environment; default this process's. */
  env?: NodeJS.ProcessEnv;
  /** The server leads a process group of its own (with its sandbox children), for signals sent to the group. */
  detached?: boolean;
  /** `inherit`: the server's stderr goes to this process's stderr (benches); default `pipe`, kept for `stderr()`. */
  stderr?: 'pipe' | 'inherit';
}

export interface ServedCli {
  /** The address it printed, `http://host:port`. */
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code (or the signal name) once the process is gone. */
  exited: Promise<number | string>;
  /** The last 64 KiB of its stdout so far (its log lines). */
  stdout(): string;
  /** The last 64 KiB of its stderr so far; '' when inherited. */
  stderr(): string;
  /** Sends `signal` (default SIGTERM) unless the process is gone; resolves as `exited` does. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

export async function serveCli(options: ServeCliOptions): Promise<ServedCli> {
  const child = spawn(NODE, [...(options.nodeFlags ?? CLI_NODE_FLAGS), options.cli ?? CLI, 'serve', '--port', '0', ...(options.args ?? [])], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', options.stderr ?? 'pipe'],
    detached: options.detached === true,
  });
  let stdout = '';
  let stderr = '';
  const keep = (kept: string, chunk: string): string => (kept + chunk).slice(-KEPT_CHARS);
  // Decoded as streams: a character split across two chunks stays whole.
  child.stdout!.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => (stderr = keep(stderr, chunk)));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));

  let listening = false;
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: string) => {
      stdout = keep(stdout, chunk);
      const match = listening ? null : LISTENING.exec(stdout);
      if (match === null) return;
      listening = true;
      resolve(match[1]);
    });
    child.on('error', (error) => reject(new Error(`ptc serve could not be started: ${error.message}`)));
    // 'close', not 'exit': by then all it wrote has been read, so a listening line it printed has
    // already resolved this promise (a rejection after that is ignored) and the stderr tail is whole.
    child.on('close', (code, signal) => {
      const tail = options.stderr === 'inherit' ? ' (its stderr is above: it went to this process)' : `; the end of its stderr:\n${stderr.slice(-QUOTED_CHARS)}`;
      reject(new Error(`ptc serve exited (${code ?? signal}) before listening${tail}`));
    });
  });

  return {
    url,
    child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** What a finished CLI command printed, and how it exited: its code, or the signal that ended it. */
export interface FinishedCli {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs one `ptc` command to its end (not `serve`): its stdin gets `stdin`, or nothing; `nodeFlags` as for serveCli. */
export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: string; nodeFlags?: readonly string[] } = {}): Promise<FinishedCli> {
  const child = spawn(NODE, [...(options.nodeFlags ?? CLI_NODE_FLAGS), CLI, ...args], { cwd: options.cwd ?? root, env: { ...process.env, PTC_LOG_LEVEL: 'warn', ...options.env } });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin!.end(options.stdin ?? '');
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}
