/**
 * The isolate core, independent of pooling: `prepareIsolate` makes a fresh
 * isolate with the bootstrap evaluated in a fresh context; `runInIsolate` runs
 * one stripped program in it, then disposes it, or hands it to the runtime to
 * host another run of the same session (`recycleIsolate`: a fresh context in
 * the same isolate). Both runtimes (in-process and the child-process pool)
 * build on these functions.
 */
import ivm from 'isolated-vm';
import type { SandboxFailure, SandboxFailureKind, SandboxRunOutcome, SandboxRunRequest, SandboxUsage } from '../src/sandbox-runtime.ts';
import { Channel, createSharedReplies, type Bindings } from './crossing/channel.ts';
import { encodeReply, HOST_FAILED, REPLY, RESULT, WIRE, type CallReply } from './crossing/protocol.ts';
import { collectAtExit } from './exit-collection.ts';
import { guestSource } from './guest-source.ts';
import { DEFAULT_FILENAME, REMOVED_GLOBALS, RESERVED_GLOBALS } from './reserved-names.ts';
import {
  GUEST,
  RECYCLE_MAX_HEAP_BYTES,
  RECYCLE_MAX_HEAP_SHARE,
  RECYCLE_PROBE_MS,
  RECYCLE_SWEEP_BYTES,
  RECYCLE_SWEEP_MIN_CHARS,
  RECYCLE_SWEEP_MIN_LIMIT_MIB,
  RECYCLE_SWEPT_MAX_PHYSICAL_BYTES,
  RECYCLE_SWEPT_MAX_PHYSICAL_SHARE,
  SYNC_WAIT_MS,
} from './tuning.ts';

/** A never-used context with the bootstrap evaluated, in its isolate. Use once with {@link runInIsolate}. */
export interface PreparedIsolate {
  readonly memoryMiB: number;
  readonly isolate: ivm.Isolate;
  readonly context: ivm.Context;
  readonly start: ivm.Reference<unknown>;
  /** The guest's `reusable` (see recycleIsolate). */
  readonly reusable: ivm.Reference<unknown>;
  bind(bindings: Bindings): void;
  /**
   * Cuts the context off from the host once its run has ended: replies, pushes and the run's
   * bindings no longer reach it. Returns whether no tool call of the run was still in flight.
   */
  detach(): boolean;
  /** Characters of tool values its run was handed (see heapVerdict). */
  receivedChars(): number;
}

/** The run an isolate's catastrophic error belongs to: the isolate outlives each run it hosts. */
const catastropheHandlers = new WeakMap<ivm.Isolate, (message: string) => void>();

/**
 * Creates an isolate of `memoryMiB` heap (or takes `reuse`, see recycleIsolate) and evaluates the
 * bootstrap in a fresh context of it. `offThread`: only the isolate's constructor (isolated-vm has
 * no asynchronous one) runs on this thread; its context, the bootstrap and its install run on
 * isolated-vm's threads. The four hops cost the process more CPU per isolate than they spare
 * this thread: right where this thread is the bottleneck and cores are spare,
 * wrong where the CPU is (see InProcessRuntimeOptions.prepareOffThread).
 */
export async function prepareIsolate(memoryMiB: number, offThread = false, reuse?: ivm.Isolate): Promise<PreparedIsolate> {
  collectAtExit();
  const isolate =
    reuse ??
    new ivm.Isolate({
      memoryLimit: memoryMiB,
      onCatastrophicError: (message) => catastropheHandlers.get(isolate)?.(message),
    });
  try {
    const context = offThread ? await isolate.createContext() : isolate.createContextSync();
    const channel = new Channel();
    const never = new Promise<string>(() => undefined);
    // Host functions never throw: a host error crossing would carry a host stack.
    const refs = [
      new ivm.Reference((batch: unknown) => {
        try {
          return channel.submit(String(batch));
        } catch {
          return channel.refuse(String(batch));
        }
      }),
      new ivm.Reference((level: unknown, text: unknown) => void channel.bindings?.log(String(level), String(text))),
      new ivm.Reference((id: unknown, ms: unknown) => channel.bindings?.timer(Number(id), Number(ms)) ?? never),
      new ivm.Reference((id: unknown) => void channel.bindings?.clearTimer(Number(id))),
      new ivm.Reference((thrown: unknown) => void channel.bindings?.fail(String(thrown))),
    ];
    const script = await compileBootstrap(isolate, offThread);
    const install = (offThread ? await script.run(context, { reference: true }) : script.runSync(context, { reference: true })) as ivm.Reference<unknown>;
    script.release();
    const installArgs = [...refs, INSTALL_NAMES, WIRE_JSON];
    const installOptions = { result: { reference: true } } as const;
    const api = (offThread ? await install.apply(undefined, installArgs, installOptions) : install.applySync(undefined, installArgs, installOptions)) as ivm.Reference<
      Record<'start' | 'push' | 'chunk' | 'reusable', unknown>
    >;
    install.release();
    const start = api.getSync('start', { reference: true }) as ivm.Reference<unknown>;
    channel.connect(api.getSync('push', { reference: true }) as ivm.Reference<unknown>, api.getSync('chunk', { reference: true }) as ivm.Reference<unknown>);
    const reusable = api.getSync('reusable', { reference: true }) as ivm.Reference<unknown>;
    api.release();
    return {
      memoryMiB,
      isolate,
      context,
      start,
      reusable,
      bind(bindings) {
        channel.bind(bindings);
        catastropheHandlers.set(isolate, bindings.catastrophe);
      },
      detach: () => channel.detach(),
      receivedChars: () => channel.receivedChars,
    };
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}

const INSTALL_NAMES = JSON.stringify({ reserved: RESERVED_GLOBALS, removed: REMOVED_GLOBALS });
const WIRE_JSON = JSON.stringify({ ...WIRE, tuning: GUEST });

// V8's code cache of the bootstrap, made by the first isolate of this process: later isolates
// deserialise the compiled functions instead of compiling them (the bootstrap is ours, never a program's).
let bootstrapCache: ivm.ExternalCopy<ArrayBuffer> | undefined;

async function compileBootstrap(isolate: ivm.Isolate, offThread: boolean): Promise<ivm.Script> {
  const cachedData = bootstrapCache;
  if (cachedData !== undefined) {
    const options = { filename: 'ptc-bootstrap.js', cachedData };
    const script = offThread ? await isolate.compileScript(guestSource(), options) : isolate.compileScriptSync(guestSource(), options);
    // Typed without it, isolated-vm sets `cachedDataRejected` on the script when V8 refused the cache.
    if ((script as { cachedDataRejected?: boolean }).cachedDataRejected === true) bootstrapCache = undefined;
    return script;
  }
  const script = isolate.compileScriptSync(guestSource(), { filename: 'ptc-bootstrap.js', produceCachedData: true });
  bootstrapCache ??= (script as ivm.CachedDataResult).cachedData;
  return script;
}

/**
 * Disposes an isolate that will never run (pool shrink, runtime close, a kept isolate dropped).
 * Its host-side handles are released first, so that none is left for the garbage collector to
 * finalise late, possibly while the process exits.
 */
export function discardIsolate(prepared: PreparedIsolate): void {
  if (prepared.isolate.isDisposed) return;
  prepared.start.release();
  prepared.reusable.release();
  prepared.context.release();
  prepared.isolate.dispose();
}

/**
 * Whether an ended run's heap lets its isolate be kept: at once while small; after a sweep when
 * the run received big values (the garbage of their parse fills the young generation) and the
 * heap's pages stay under the sweep's bounds; else not.
 */
function heapVerdict(prepared: PreparedIsolate, heap: ivm.HeapStatistics): 'keep' | 'sweep' | false {
  const limit = prepared.memoryMiB * 1024 * 1024;
  if (heap.used_heap_size <= Math.min(RECYCLE_MAX_HEAP_BYTES, limit * RECYCLE_MAX_HEAP_SHARE)) return 'keep';
  if (prepared.memoryMiB < RECYCLE_SWEEP_MIN_LIMIT_MIB || prepared.receivedChars() < RECYCLE_SWEEP_MIN_CHARS) return false;
  return heap.total_physical_size <= Math.min(RECYCLE_SWEPT_MAX_PHYSICAL_BYTES, limit * RECYCLE_SWEPT_MAX_PHYSICAL_SHARE) && 'sweep';
}

/** Garbage in 64 KiB arrays, below V8's large-object size, so it fills the young generation. */
const SWEEP_SOURCE = `for (let i = 0; i < ${RECYCLE_SWEEP_BYTES / 65_536}; i++) new Array(8_190);`;

/**
 * Allocates garbage in a scratch context of `isolate` until its young generation has collected,
 * the ended run's context released: the run's values are then dead, so the collection copies
 * almost nothing, and the next run starts with a young generation grown and empty. Without it a
 * big value's parse in a kept isolate was interrupted by collections that copy the value.
 */
async function sweepYoungGeneration(isolate: ivm.Isolate): Promise<void> {
  const scratch = await isolate.createContext();
  try {
    await scratch.eval(SWEEP_SOURCE);
  } finally {
    scratch.release();
  }
}

/**
 * Readies the isolate of a run that ended cleanly (see RunControl.recycle) for another run: a
 * fresh context with the bootstrap, in the same isolate, which skips the isolate's constructor,
 * isolated-vm's default context and the disposal. Only if the old context can no longer run
 * anything by itself: the guest says so (`reusable`, asked as a task of its own, so after every
 * microtask of the program), and its heap is small or, after a sweep, its pages are (heapVerdict).
 * The old context keeps nothing the new one can reach: its globals, built-ins and host bindings
 * are its own.
 * What the two share is the isolate's heap limit, its compilation cache and string table (timing
 * only), so runtimes recycle only between runs of one session. Resolves undefined, the isolate
 * disposed, when it is not reusable.
 */
export async function recycleIsolate(prepared: PreparedIsolate, offThread: boolean): Promise<PreparedIsolate | undefined> {
  const { isolate } = prepared;
  let timer: NodeJS.Timeout | undefined;
  try {
    const verdict = await Promise.race([
      (async () => {
        const answer = await prepared.reusable.apply(undefined, []);
        if (answer !== '1') return false;
        // Synchronous: the isolate is idle now (nothing of the context can run), and the next run of
        // the session waits for this recycle, so a second hop would lengthen its start.
        return heapVerdict(prepared, isolate.getHeapStatisticsSync());
      })(),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), RECYCLE_PROBE_MS))),
    ]);
    clearTimeout(timer);
    prepared.start.release();
    prepared.reusable.release();
    prepared.context.release();
    if (!verdict || isolate.isDisposed) throw new Error('not reusable');
    catastropheHandlers.delete(isolate);
    if (verdict === 'sweep') await sweepYoungGeneration(isolate);
    return await prepareIsolate(prepared.memoryMiB, offThread, isolate);
  } catch {
    clearTimeout(timer);
    if (!isolate.isDisposed) isolate.dispose();
    return undefined;
  }
}

interface Forced {
  kind: SandboxFailureKind;
  message: string;
  frames?: string[];
  line?: number;
  column?: number;
}

/** Lets the runtime end a run from outside (its memory budget stops the run that grew most). */
export interface RunControl {
  /** Set by {@link runInIsolate} when the run starts: disposes the isolate, the run fails with `failure`. */
  stop?: (failure: SandboxFailure) => void;
  /**
   * Called on every event after which guest code may run or has run: the start, a reply or a
   * fired timer handed over, a call, a log line or a timer sent. Between two such events the run
   * cannot grow (the memory budget measures only runs touched since their last measurement).
   */
  touched?: () => void;
  /**
   * Tool calls cross synchronously through shared memory ({@link SharedReplies}), waiting at most
   * one host turn for the replies before falling back to the asynchronous crossing. Only where
   * tools answer in this process (in a child process the replies come over IPC, never in a turn).
   */
  syncCalls?: boolean;
  /** Tools to call asynchronously from the start: they recently missed the host's turn, or answered more than the shared memory holds. */
  slowTools?: readonly string[];
  /**
   * Longest wait in a synchronous crossing, ms; default 100. The host answers within its turn;
   * a longer turn (an overloaded host) is not waited out, since the waiting guest holds an
   * isolated-vm thread: it gives up, and the replies come the asynchronous way.
   */
  syncWaitMs?: number;
  /**
   * Called when a call of `name` crossed synchronously and missed the host's turn (its reply came
   * the asynchronous way, one crossing later than if the call had gone that way), and for every
   * reply of it, however it crossed, that is more than the shared memory holds.
   */
  onSlowTool?: (name: string) => void;
  /**
   * Called instead of disposing the isolate when the run ended cleanly: its program settled on
   * its own and no tool call was in flight. The callee owns the isolate from then on; pass it to
   * {@link recycleIsolate} (or dispose it).
   */
  recycle?: (prepared: PreparedIsolate) => void;
}

/** {@link SandboxRunRequest}, whose calls may answer with text already made ({@link CallReply}). */
export interface IsolateRunRequest extends Omit<SandboxRunRequest, 'callTool'> {
  callTool(name: string, argsJson: string, readsJson?: string): Promise<CallReply>;
}

/**
 * Runs one program (already stripped by `stripProgram`) in `prepared`, which
 * is disposed before this resolves. Never rejects.
 */
export async function runInIsolate(prepared: PreparedIsolate, js: string, request: IsolateRunRequest, control?: RunControl): Promise<SandboxRunOutcome> {
  const filename = request.filename ?? DEFAULT_FILENAME;
  const { limits, signal } = request;
  const logs: string[] = [];
  let logBytes = 0;
  let truncated = false;
  const timers = new Map<number, { handle: NodeJS.Timeout; resolve: (fired: string) => void }>();
  let forced: Forced | undefined;
  let settleForced: (() => void) | undefined;
  const forcedPromise = new Promise<void>((resolve) => (settleForced = resolve));
  let disposedByHost = false;
  /** The program's promise settled and the guest answered: the isolate is intact (RunControl.recycle). */
  let settled = false;

  let received = 0;
  let awaitLogs: { count: number; resolve(): void } | undefined;
  const push = (line: string): void => {
    logs.push(line);
    try {
      request.onLog?.(line);
    } catch {
      // a listener's failure must not end the run
    }
  };
  const force = (failure: Forced): void => {
    if (forced !== undefined) return;
    forced = failure;
    disposedByHost = true;
    if (!prepared.isolate.isDisposed) prepared.isolate.dispose();
    settleForced?.();
  };

  const encodeOutcome = (outcome: CallReply, sendSlice: (json: string) => void): string => {
    if (!('fatal' in outcome)) return encodeReply(outcome, sendSlice);
    force({ kind: outcome.fatal.kind, message: outcome.fatal.message });
    return REPLY.fatal;
  };

  const touched = control?.touched ?? ((): void => undefined);
  const shared = control?.syncCalls === true ? createSharedReplies() : undefined;
  prepared.bind({
    touch: touched,
    sharedReplies: shared,
    slowTool: (name) => control?.onSlowTool?.(name),
    // Not async: each await is a microtask hop on every nested call.
    call: (name, argsJson, readsJson, sendSlice) => {
      if (forced !== undefined) return Promise.resolve(REPLY.fatal);
      let pending;
      try {
        pending = request.callTool(name, argsJson, readsJson);
      } catch {
        return Promise.resolve(HOST_FAILED);
      }
      return pending.then((outcome) => encodeOutcome(outcome, sendSlice), () => HOST_FAILED);
    },
    log: (level, text) => {
      touched();
      received++;
      if (awaitLogs !== undefined && received >= awaitLogs.count) awaitLogs.resolve();
      if (level === 'notice') return push(text);
      if (truncated) return;
      const bytes = Buffer.byteLength(text) + 1;
      if (logBytes + bytes > limits.maxLogBytes) {
        truncated = true;
        push(`[ptc] logs truncated: the program logged more than ${limits.maxLogBytes} bytes; later lines were dropped`);
        return;
      }
      logBytes += bytes;
      push(text);
    },
    timer: (id, ms) =>
      new Promise<string>((resolve) => {
        touched();
        if (forced !== undefined) return resolve('0');
        const handle = setTimeout(() => {
          timers.delete(id);
          touched();
          resolve('1');
        }, Math.min(Math.max(0, ms), limits.timeoutMs));
        timers.set(id, { handle, resolve });
      }),
    clearTimer: (id) => {
      const timer = timers.get(id);
      if (timer === undefined) return;
      clearTimeout(timer.handle);
      timers.delete(id);
      touched();
      timer.resolve('0');
    },
    fail: (thrownJson) => force({ kind: 'exception', ...describeException(thrownJson, filename, 'in a setTimeout callback') }),
    catastrophe: (message) => force({ kind: 'crashed', message: `the sandbox failed irrecoverably (${message}); run the program again` }),
  });

  if (control !== undefined) control.stop = (failure) => force({ ...failure });
  const onAbort = (): void => force({ kind: 'abort', message: 'the run was cancelled' });
  const deadline = setTimeout(
    () => force({ kind: 'timeout', message: `the program ran longer than ${limits.timeoutMs} ms (wall time, tool calls included): do less per run, or allow more time` }),
    limits.timeoutMs,
  );
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort();
  try {
    request.onStart?.();
  } catch {
    // the caller's notice; the run goes on without it
  }

  try {
    const reply = await Promise.race([execute(prepared, js, filename, request, shared, control, touched), forcedPromise.then(() => undefined)]);
    if (forced !== undefined) return { ok: false, logs, failure: forced, usage: { logBytes } };
    if (reply === undefined) return { ok: false, logs, failure: { kind: 'crashed', message: 'the sandbox stopped without a result; run the program again' } };
    // Asked for now, so that it overlaps the wait for the last log lines.
    const heap = readHeap(prepared.isolate);
    if ('failure' in reply) return { ok: false, logs, failure: reply.failure, usage: { logBytes, ...(await heap) } };
    settled = true;
    const bar = reply.text.indexOf('|');
    const sent = Number(reply.text.slice(0, bar));
    // Log lines travel fire-and-forget and may still be queued behind the reply.
    if (received < sent) {
      await Promise.race([new Promise<void>((resolve) => (awaitLogs = { count: sent, resolve })), forcedPromise]);
      if (forced !== undefined) return { ok: false, logs, failure: forced, usage: { logBytes } };
    }
    const usage: SandboxUsage = { logBytes, ...(await heap) };
    return decode(reply.text.slice(bar + 1), logs, filename, limits.maxResultBytes, usage);
  } catch (error) {
    if (forced !== undefined) return { ok: false, logs, failure: forced, usage: { logBytes } };
    const text = error instanceof Error ? error.message : String(error);
    if (/memory limit/i.test(text) || (prepared.isolate.isDisposed && !disposedByHost)) {
      return {
        ok: false,
        logs,
        failure: { kind: 'memory', message: `the program used more than its ${limits.memoryMiB} MiB heap: process the data in smaller pieces and keep less of it in memory` },
      };
    }
    // isolated-vm rejects the run with a rejection the program left unhandled.
    if (error instanceof Error && typeof error.stack === 'string' && error.stack.includes(`${filename}:`)) {
      const thrown = JSON.stringify({ message: `${error.name}: ${error.message}`, stack: error.stack });
      return { ok: false, logs, failure: { kind: 'exception', ...describeException(thrown, filename, '(an unhandled promise rejection: await or catch it)') } };
    }
    return { ok: false, logs, failure: { kind: 'crashed', message: 'the sandbox failed while running the program; run it again' } };
  } finally {
    clearTimeout(deadline);
    signal.removeEventListener('abort', onAbort);
    for (const timer of timers.values()) {
      clearTimeout(timer.handle);
      timer.resolve('0');
    }
    timers.clear();
    const clean = settled && forced === undefined;
    forced ??= { kind: 'crashed', message: 'the run has ended' };
    const quiet = prepared.detach();
    // Handed over now, so that the session's next run, which may start as soon as this one has
    // answered, finds it (recycling is asynchronous anyway).
    if (control?.recycle !== undefined && clean && quiet && !prepared.isolate.isDisposed) control.recycle(prepared);
    else {
      // Nothing of the host reaches it any more; dispose off the reply path.
      setImmediate(() => {
        if (!prepared.isolate.isDisposed) prepared.isolate.dispose();
      });
    }
  }
}

const OUT_OF_MEMORY = /^RangeError: (Array buffer allocation failed|Invalid string length)/;

type Reply = { text: string } | { failure: SandboxFailure };

async function execute(
  prepared: PreparedIsolate,
  js: string,
  filename: string,
  request: IsolateRunRequest,
  shared: SharedArrayBuffer | undefined,
  control: RunControl | undefined,
  touched: () => void,
): Promise<Reply> {
  // Compiling never runs code and is bounded by the program's size: done
  // synchronously, it saves a thread-pool hop. Running the script stays
  // asynchronous: a program that closes the wrapper early runs code right here.
  let script: ivm.Script;
  try {
    script = prepared.isolate.compileScriptSync(js, { filename, lineOffset: -1 });
  } catch (error) {
    if (prepared.isolate.isDisposed) throw error;
    return { failure: describeSyntaxError(error instanceof Error ? error.message : String(error), filename) };
  }
  const program = (await script.run(prepared.context, { reference: true })) as ivm.Reference<unknown>;
  // Released as used: a recycled isolate outlives this run, and held handles would keep its old context alive.
  script.release();
  const { maxLogBytes, maxResultBytes, maxArgBytes } = request.limits;
  const slowTools = control?.slowTools ?? [];
  const settings: Record<string, unknown> =
    shared === undefined ? { maxLogBytes, maxResultBytes, maxArgBytes } : { maxLogBytes, maxResultBytes, maxArgBytes, slowTools, syncWaitMs: control?.syncWaitMs ?? SYNC_WAIT_MS };
  if (request.recordReads !== undefined) settings.reads = request.recordReads.replay;
  const config = JSON.stringify(settings);
  // Shared, not copied: isolated-vm hands the guest the same memory.
  const sharedArg = shared === undefined ? undefined : new ivm.ExternalCopy(shared).copyInto({ release: true });
  // The program starts now: a measurement asked for earlier would not cover it.
  touched();
  const text = await prepared.start.apply(undefined, [JSON.stringify(request.toolNames), config, program.derefInto({ release: true }), sharedArg], {
    result: { promise: true },
  });
  return { text: String(text) };
}

function decode(text: string, logs: string[], filename: string, maxResultBytes: number, usage: SandboxUsage): SandboxRunOutcome {
  const tag = text[0];
  const body = text.slice(1);
  switch (tag) {
    case RESULT.none:
      return { ok: true, logs, usage };
    case RESULT.value: {
      const bytes = Buffer.byteLength(body);
      usage.resultBytes = bytes;
      if (bytes > maxResultBytes) {
        return {
          ok: false,
          logs,
          failure: { kind: 'output-limit', message: `the returned value is ${bytes} bytes of JSON, over the ${maxResultBytes}-byte limit: return less (summarise, or page through the data)` },
          usage,
        };
      }
      return { ok: true, logs, resultJson: body, usage };
    }
    case RESULT.invalid:
      return { ok: false, logs, failure: { kind: 'invalid-output', message: body }, usage };
    case RESULT.tooLarge:
      return { ok: false, logs, failure: { kind: 'output-limit', message: body }, usage };
    default: {
      const described = describeException(body, filename);
      // V8 reports these as ordinary RangeErrors, but the cause is the heap limit.
      const kind = OUT_OF_MEMORY.test(described.message) ? 'memory' : 'exception';
      return { ok: false, logs, failure: { kind, ...described }, usage };
    }
  }
}

/**
 * How long the heap figures of an ended run may take, ms. An idle isolate answers at once; one
 * still busy (a program's endless chain of microtasks after it returned) would never answer, and
 * its run must not wait for it.
 */
const HEAP_READ_MS = 50;

/** The isolate's committed heap and its limit, or nothing when it does not answer in time. */
function readHeap(isolate: ivm.Isolate): Promise<Pick<SandboxUsage, 'heapPeakBytes' | 'heapLimitBytes'>> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    isolate.getHeapStatistics().then(
      (heap) => ({ heapPeakBytes: heap.total_heap_size, heapLimitBytes: heap.heap_size_limit }),
      () => ({}),
    ),
    new Promise<Record<string, never>>((resolve) => (timer = setTimeout(() => resolve({}), HEAP_READ_MS))),
  ]).finally(() => clearTimeout(timer));
}

/** `Unexpected token '=' [agent.ts:2:7]` → message with `(agent.ts:2:7)`, line and column. */
function describeSyntaxError(text: string, filename: string): SandboxFailure {
  const match = /^(.*?)\s*\[([^\]]*):(\d+):(\d+)\]\s*$/s.exec(text);
  if (match === null || match[2] !== filename) return { kind: 'syntax', message: `SyntaxError: ${text}` };
  const line = Number(match[3]);
  const column = Number(match[4]);
  return { kind: 'syntax', message: `SyntaxError: ${match[1]} (${filename}:${line}:${column})`, line, column };
}

function describeException(thrownJson: string, filename: string, context?: string): Omit<SandboxFailure, 'kind'> {
  let thrown: { message: string; stack: string; callId?: unknown };
  try {
    thrown = JSON.parse(thrownJson) as { message: string; stack: string; callId?: unknown };
  } catch {
    thrown = { message: 'Uncaught a value that could not be described', stack: '' };
  }
  const frames = thrown.stack
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('at ') && line.includes(`${filename}:`));
  const position = frames.length > 0 ? new RegExp(`${escape(filename)}:(\\d+):(\\d+)`).exec(frames[0]) : null;
  const where = position === null ? '' : ` (${filename}:${position[1]}:${position[2]})`;
  const message = `${thrown.message}${where}${context === undefined ? '' : ` ${context}`}`;
  const described: Omit<SandboxFailure, 'kind'> =
    position === null ? { message, frames } : { message, frames, line: Number(position[1]), column: Number(position[2]) };
  if (typeof thrown.callId === 'string' && thrown.callId !== '' && thrown.callId.length <= 512) described.callId = thrown.callId;
  return described;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
