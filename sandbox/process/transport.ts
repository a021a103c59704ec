/**
 * How the parent reaches one sandbox child: a child process (the `process`
 * runtime: a V8 abort or a runaway builtin costs that process, never the
 * host) or a worker thread (the in-process runtime's burst threads: the same
 * protocol and supervision, in this process). `SandboxChild` speaks the
 * protocol over either; this file owns the difference.
 */
import { fork } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { GUEST_FREEZE_FLAGS, hasOwnOptimizationFilter } from '../guest-tiering.ts';
import { ISOLATE_HOST_FLAGS } from '../host-flags.ts';
import { childEntry } from './options.ts';

export type TransportKind = 'process' | 'thread';

export interface TransportEvents {
  message(message: unknown): void;
  /** The child is gone; `reason` says why (for the startup error). Called once. */
  exit(reason: string): void;
  /** The channel failed while the child lives: the child can no longer be trusted to get its messages. */
  broken(): void;
}

export interface ChildTransport {
  /** The process id, or the thread id. */
  readonly id: number;
  /**
   * A process has memory of its own (its heartbeat reports its resident set,
   * which the parent caps) and its death ends whatever still runs in it. A
   * thread shares this process's memory, and a runaway isolate outlives it.
   */
  readonly kind: TransportKind;
  send(message: unknown): void;
  /** Asks the child to leave: it cancels its runs, disposes its isolates and ends. */
  close(): void;
  /** Ends the child now: a process is SIGKILLed; a thread is given up (see `startThread`). */
  kill(): void;
  /** Whether the child keeps this process's event loop alive (an idle pool must not). */
  hold(on: boolean): void;
}

export function startChild(kind: TransportKind, execArgv: readonly string[], events: TransportEvents): ChildTransport {
  return kind === 'thread' ? startThread(events) : startProcess(execArgv, events);
}

/**
 * The Node flags of a sandbox child process given `execArgv`: the host flags, and the guest's
 * optimization filters unless `execArgv` has its own. The child is this library's own process, so
 * it may set process-wide V8 flags (guest-tiering.ts).
 */
export function childExecArgv(execArgv: readonly string[]): string[] {
  return [...ISOLATE_HOST_FLAGS, '--disable-warning=ExperimentalWarning', ...(hasOwnOptimizationFilter(execArgv) ? [] : GUEST_FREEZE_FLAGS), ...execArgv];
}

function startProcess(execArgv: readonly string[], events: TransportEvents): ChildTransport {
  const child = fork(childEntry, [], {
    execPath: process.execPath,
    execArgv: childExecArgv(execArgv),
    serialization: 'json',
    // The child's output is diagnostics only (V8's OOM reports go to its
    // stdout): keep it off this process's stdout, which may carry data.
    stdio: ['ignore', 2, 2, 'ipc'],
  });
  let ended = false;
  const end = (reason: string): void => {
    if (ended) return;
    ended = true;
    events.exit(reason);
  };
  child.once('exit', (code, signal) => end(signal ? `signal ${signal}` : `exit code ${code}`));
  child.on('error', (error) => {
    // A process that never spawned emits no 'exit'.
    if (child.pid === undefined) end(`spawn failed: ${error.message}`);
    else events.broken();
  });
  child.on('message', (message: unknown) => events.message(message));
  return {
    id: child.pid ?? -1,
    kind: 'process',
    send(message) {
      if (!child.connected) return;
      child.send(message as object, (error) => {
        if (error) events.broken();
      });
    },
    // The child ignores SIGTERM and SIGINT (child-main.ts) and leaves when its channel closes.
    close() {
      if (child.connected) child.disconnect();
      else child.kill('SIGKILL');
    },
    kill() {
      child.kill('SIGKILL');
    },
    hold(on) {
      if (on) {
        child.ref();
        child.channel?.ref();
      } else {
        child.unref();
        child.channel?.unref();
      }
    },
  };
}

function startThread(events: TransportEvents): ChildTransport {
  // The thread inherits this process's flags (the host flags among them). It sends its own
  // stdout to stderr (child-main.ts): not piped from here, since a flowing worker stdout holds
  // this process's event loop open even when the thread is unref'd.
  const worker = new Worker(childEntry);
  let ended = false;
  const end = (reason: string): void => {
    if (ended) return;
    ended = true;
    events.exit(reason);
  };
  worker.once('exit', (code) => end(`exit code ${code}`));
  // The thread catches its own uncaught errors (child-main.ts): it falls silent and ends, and 'exit' tells.
  // This listener only keeps such an error, should one get through, from throwing in this process.
  worker.on('error', () => undefined);
  worker.on('message', (message: unknown) => events.message(message));
  const leave = (): void => {
    try {
      worker.postMessage({ type: 'leave' });
    } catch {
      // already gone
    }
  };
  return {
    id: worker.threadId,
    kind: 'thread',
    send(message) {
      if (ended) return;
      try {
        worker.postMessage(message);
      } catch {
        events.broken();
      }
    },
    close: leave,
    // Never worker.terminate(): tearing a thread down under live isolates aborts the whole process
    // (isolated-vm asserts on a callback into the thread's environment; seen in test/sandbox/burst-close.probe.ts).
    // The thread is told to leave (it disposes its isolates first) and is given up for gone: it no longer
    // holds this process open, and one that never leaves (a runaway isolate) only lingers, as it would here.
    kill() {
      leave();
      worker.unref();
      end('given up');
    },
    hold(on) {
      if (ended) return;
      if (on) worker.ref();
      else worker.unref();
    },
  };
}
