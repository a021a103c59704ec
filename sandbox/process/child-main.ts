/**
 * The entry of one sandbox child, a process or a worker thread
 * (transport.ts): it hosts an in-process runtime and runs the parent's
 * requests with it. Tools stay in the parent: a program's nested calls and
 * log lines are relayed over the channel, the results relayed back.
 */
import { parentPort } from 'node:worker_threads';
import type { SandboxRunOutcome } from '../../src/sandbox-runtime.ts';
import type { InProcessRuntime } from '../in-process-runtime.ts';
import { leaveProcess } from '../leave-process.ts';
import { Outbox, unbatch, type ChildBudgetReport, type ChildMessage, type ChildRuntimeOptions, type DoneOutcome, type ParentMessage, type WireCallOutcome } from './protocol.ts';

type RuntimeFactory = (options?: ChildRuntimeOptions) => InProcessRuntime;

interface ActiveRun {
  controller: AbortController;
  pendingCalls: Map<number, (outcome: WireCallOutcome) => void>;
  nextCallSeq: number;
}

let runtime: InProcessRuntime | undefined;
/** The runtime's start-up, while it lasts: a leave that arrives meanwhile waits for it, then closes the runtime. */
let starting: Promise<void> | undefined;
const runs = new Map<number, ActiveRun>();
/** In a worker thread, the port to the parent; in a child process, none (the IPC channel). */
const port = parentPort;

const outbox = new Outbox<ChildMessage>((message) => {
  if (port !== null) port.postMessage(message);
  // A failed send means the parent is gone; 'disconnect' ends this process.
  else if (process.connected) process.send?.(message, undefined, undefined, () => undefined);
});

function send(message: ChildMessage): void {
  outbox.send(message);
}

// The parent is gone (closed or killed): nothing may outlive it. This is
// also how the supervisor stops a child process: it closes the IPC channel
// (a thread gets a 'leave' message). The runs are cancelled and the isolates
// disposed first, then the child leaves its event loop (see leave-process.ts:
// process.exit here would crash it).
let leaving: Promise<void> | undefined;
function leave(): void {
  leaving ??= (async () => {
    // Armed first: with no parent left to kill it, a close that never ends must not keep this process alive.
    // A child whose runtime never started has set exit code 1. Not in a thread: ending one under live
    // isolates aborts the whole process (transport.ts); its parent gives it up instead.
    if (port === null) leaveProcess(Number(process.exitCode ?? 0));
    for (const runId of runs.keys()) abortRun(runId);
    await starting;
    await runtime?.close();
    port?.close();
  })().catch(() => undefined);
}

if (port !== null) {
  // A thread's output is diagnostics only and goes to stderr, as a child process's does: this
  // process's stdout may carry data (`ptc mcp`).
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  port.on('message', (received: unknown) => {
    for (const message of unbatch(received)) onMessage(message as ParentMessage);
  });
  // A thread that dies of an uncaught error while its isolates live would abort the whole process
  // (transport.ts). So it falls silent at once (the parent hears no more of it, and fails its runs
  // `crashed` when it has ended), then disposes its isolates and ends with exit code 1.
  process.on('uncaughtException', () => {
    process.exitCode = 1;
    port.close();
    leave();
  });
} else {
  process.on('disconnect', leave);
  // A terminal's Ctrl-C (SIGINT) and systemd's KillMode=control-group (SIGTERM)
  // signal the whole process group. The server drains its in-flight runs on
  // such a signal, and those runs live here: leaving now would fail them
  // `crashed`. The child leaves when the supervisor says so (the channel
  // closes) or when its parent dies (the same); SIGKILL still works.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => undefined);
  process.on('message', (received: unknown) => {
    for (const message of unbatch(received)) onMessage(message as ParentMessage);
  });
}

function onMessage(message: ParentMessage): void {
  switch (message.type) {
    case 'init':
      starting = init(message.runtimeModule, message.runtimeOptions);
      return;
    case 'run':
      startRun(message);
      return;
    case 'call-result':
      settleCall(message.runId, message.callSeq, message.outcome);
      return;
    case 'abort':
      abortRun(message.runId);
      return;
    case 'ping':
      send({ type: 'pong', seq: message.seq, rssBytes: process.memoryUsage.rss(), budget: budgetReport() });
      return;
    case 'leave':
      leave();
      return;
  }
}

async function init(runtimeModule: string, runtimeOptions: ChildRuntimeOptions): Promise<void> {
  try {
    const module = (await import(runtimeModule)) as { createInProcessRuntime?: RuntimeFactory };
    if (typeof module.createInProcessRuntime !== 'function') {
      throw new Error('the runtime module exports no createInProcessRuntime function');
    }
    // Calls leave this child over the channel and never answer within one turn: the synchronous crossing would only add one.
    // Sibling children keep the other cores busy: this child takes no burst threads of its own, and
    // sets its isolates up on its own thread (less CPU in all than handing steps to isolated-vm's threads).
    runtime = module.createInProcessRuntime({ ...runtimeOptions, syncToolCalls: false, burstThreads: 0, prepareOffThread: false });
    await runtime.ready();
    send({ type: 'ready' });
  } catch (error) {
    send({ type: 'init-failed', message: error instanceof Error ? error.message : String(error) });
    process.exitCode = 1;
    if (port !== null) leave();
    else process.disconnect();
  }
}

function startRun(message: Extract<ParentMessage, { type: 'run' }>): void {
  const { runId } = message;
  const run: ActiveRun = { controller: new AbortController(), pendingCalls: new Map(), nextCallSeq: 0 };
  runs.set(runId, run);
  const active = runtime;
  const outcome: Promise<SandboxRunOutcome> = active
    ? active.run({
        code: message.code,
        ...(message.filename === undefined ? {} : { filename: message.filename }),
        ...(typeof message.sessionId === 'string' ? { sessionId: message.sessionId } : {}),
        toolNames: message.toolNames,
        limits: message.limits,
        ...(message.recordReads === undefined ? {} : { recordReads: message.recordReads }),
        signal: run.controller.signal,
        callTool: (name, argsJson, readsJson) =>
          new Promise<WireCallOutcome>((resolve) => {
            const callSeq = run.nextCallSeq++;
            run.pendingCalls.set(callSeq, resolve);
            send(readsJson === undefined ? { type: 'call', runId, callSeq, name, argsJson } : { type: 'call', runId, callSeq, name, argsJson, readsJson });
          }),
        onLog: (line: string) => send({ type: 'log', runId, line }),
        // The parent times the run from here: it may have waited here for headroom or an isolate.
        onStart: () => send({ type: 'started', runId }),
      })
    : Promise.resolve(crashed('the sandbox process took a run before its runtime was ready'));
  outcome
    .catch(() => crashed('the sandbox runtime failed unexpectedly during the run; run it again'))
    .then(({ logs: _relayed, ...outcome }) => {
      runs.delete(runId);
      // The lines went live through onLog; the parent has them, in order.
      send({ type: 'done', runId, outcome: outcome as DoneOutcome });
    });
}

function settleCall(runId: number, callSeq: number, outcome: WireCallOutcome): void {
  const run = runs.get(runId);
  const resolve = run?.pendingCalls.get(callSeq);
  if (!run || !resolve) return;
  run.pendingCalls.delete(callSeq);
  resolve(outcome);
}

// The parent's code mode owns the real nested calls and waits for them to
// settle; the child need not, so an aborted run ends here without waiting.
function abortRun(runId: number): void {
  const run = runs.get(runId);
  if (!run) return;
  run.controller.abort();
  for (const resolve of run.pendingCalls.values()) {
    resolve({ ok: false, fatal: { kind: 'abort', message: 'the run was aborted' } });
  }
  run.pendingCalls.clear();
}

function budgetReport(): ChildBudgetReport | undefined {
  const status = runtime?.status();
  if (status?.memoryUsedBytes === undefined) return undefined;
  return { usedBytes: status.memoryUsedBytes, runs: status.busy, stopped: status.memoryStopped ?? 0, reused: status.isolatesReused ?? 0, keptBytes: status.keptIsolateBytes ?? 0 };
}

function crashed(message: string): SandboxRunOutcome {
  return { ok: false, logs: [], failure: { kind: 'crashed', message } };
}
