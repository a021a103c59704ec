/**
 * The isolate core, independent of pooling: `prepareIsolate` makes a fresh
 * isolate with the bootstrap evaluated in a fresh context; `runInIsolate` runs
 * one stripped program in it, then disposes it, or hands it to the runtime to
 * host another run of the same session (`recycleIsolate`: a fresh context in
 * the same isolate). Both runtimes (in-process and the child-process pool)
 * build on these functions.
 */
import ivm from 'isolated-vm';
import type { SandboxCallOutcome, SandboxFailure, SandboxFailureKind, SandboxRunOutcome, SandboxRunRequest } from '../src/sandbox-runtime.ts';
import { sendInSlices } from './crossing/value-slices.ts';
import { collectAtExit } from './exit-collection.ts';
import { guestSource } from './guest-source.ts';
import { DEFAULT_FILENAME, REMOVED_GLOBALS, RESERVED_GLOBALS } from './reserved-names.ts';

/** What the host answers to the guest; set per run, before the program starts. */
interface Bindings {
  /** `sendSlice`: where the value may go a slice at a time before the reply (`C<count>`, see GuestApi.chunk). */
  call(name: string, argsJson: string, readsJson: string | undefined, sendSlice: (json: string) => void): Promise<string>;
  log(level: string, text: string): void;
  timer(id: number, ms: number): Promise<string>;
  clearTimer(id: number): void;
  fail(thrownJson: string): void;
  catastrophe(message: string): void;
  /** Guest code may run (the host handed it something) or has run (it sent something): see RunControl.touched. */
  touch(): void;
  /** The memory the synchronous crossing answers through ({@link createSharedReplies}); none: calls cross asynchronously. */
  sharedReplies?: SharedArrayBuffer;
  /** A call crossed synchronously and missed the host's turn, or its reply outgrew the shared memory (see RunControl.onSlowTool). */
  slowTool(name: string): void;
}

/**
 * The synchronous crossing. The guest stores SHARED_WAITING in `control[0]`, sends its calls
 * fire-and-forget and blocks in `Atomics.wait`. Within that host turn the host writes the replies
 * ready by then as UTF-16 into `text`, their length into `control[1]`, swaps the state to
 * SHARED_ANSWERED and wakes it: two thread hops fewer per call than an asynchronous apply.
 * Nothing of isolated-vm waits, so disposing the isolate mid-wait (which wakes the guest
 * with a termination) leaves no crossing state behind.
 */
interface SharedReplies {
  readonly control: Int32Array;
  readonly text: Buffer;
  /** UTF-16 code units `text` holds. */
  readonly capacity: number;
}

const DEFAULT_SYNC_WAIT_MS = 100;
/**
 * Characters of replies (while more calls run) past which they go to a waiting guest at once
 * rather than at the end of the host's turn: one or two pages of rows. Each push costs a crossing,
 * but the guest parses what it got while this thread still makes the rest (bench/RESULTS.md).
 */
const PUSH_CHARS = 16 * 1024;
const SHARED_WAITING = 1;
const SHARED_ANSWERED = 2;
/** Control words before the text (Int32 each): state, text length, spin allowed, unused. */
const SHARED_HEADER_BYTES = 16;
/** The control word that allows the guest to spin before it blocks (RunControl.allowSpin). */
const SHARED_SPIN_WORD = 2;
/**
 * Bytes of replies one synchronous crossing carries: page-sized results of in-memory tools fit;
 * bigger batches go the asynchronous way. Allocated per run, so it stays small: a thousand runs
 * waiting on tools hold a thousand of these.
 */
const SHARED_REPLY_BYTES = 16 * 1024;

/** Memory for one run's synchronous crossing; handed to the guest at start and to the host in its bindings. */
export function createSharedReplies(): SharedArrayBuffer {
  return new SharedArrayBuffer(SHARED_HEADER_BYTES + SHARED_REPLY_BYTES);
}

function sharedReplies(buffer: SharedArrayBuffer): SharedReplies {
  return {
    control: new Int32Array(buffer, 0, 2),
    text: Buffer.from(buffer, SHARED_HEADER_BYTES),
    capacity: (buffer.byteLength - SHARED_HEADER_BYTES) >> 1,
  };
}

/** Characters of whole replies (`<ordinal> <length> <text>` each) at the start of `batch` that fit in `capacity`. */
function fittingReplies(batch: string, capacity: number): number {
  let at = 0;
  for (;;) {
    const space = batch.indexOf(' ', at);
    const space2 = batch.indexOf(' ', space + 1);
    const end = space2 + 1 + Number(batch.slice(space + 1, space2));
    if (space < 0 || space2 < 0 || end > capacity) return at;
    at = end;
  }
}

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
  let bindings: Bindings | undefined;
  let shared: SharedReplies | undefined;
  collectAtExit();
  const isolate =
    reuse ??
    new ivm.Isolate({
      memoryLimit: memoryMiB,
      onCatastrophicError: (message) => catastropheHandlers.get(isolate)?.(message),
    });
  try {
    const context = offThread ? await isolate.createContext() : isolate.createContextSync();
    const never = new Promise<string>(() => undefined);
    // Replies travel back as the answer to the guest's latest submit (see the guest's wire protocol):
    // a host→isolate call per reply costs far more than settling a promise isolated-vm already awaits.
    let outbox = '';
    let answer: ((batch: string) => void) | undefined;
    let flushQueued = false;
    let ordinal = 0;
    let running = 0;
    const answerNow = (): void => {
      const resolve = answer;
      if (resolve === undefined) return;
      answer = undefined;
      if (resolve === syncAnswer && syncTurn !== undefined) {
        // Answered within its turn (in-memory tools): nothing is left for the turn's end to do.
        clearImmediate(syncTurn);
        syncTurn = undefined;
        syncAnswer = undefined;
      }
      bindings?.touch();
      // Once replies went ahead of this answer, the rest follows them (see pushNow) and the answer carries none.
      if (pushed && outbox !== '') pushNow();
      pushed = false;
      const batch = outbox;
      outbox = '';
      resolve(batch);
    };
    /** The guest's `push` and `chunk` (set once the bootstrap has run). */
    let pushRef: ivm.Reference<unknown> | undefined;
    let chunkRef: ivm.Reference<unknown> | undefined;
    /**
     * Hands the guest the next slice of call `n`'s value while the host makes the rest's text (a
     * big array, see crossing/value-slices.ts): a task of the isolate's own, which runs as soon as
     * the guest is idle (awaiting), while this thread goes on. The call's reply, `C<count>`, may
     * overtake the slices: the guest settles the call when the last has come.
     */
    const pushChunk = (n: number, json: string): void => {
      bindings?.touch();
      try {
        chunkRef?.applyIgnored(undefined, [n, json]);
      } catch {
        // the isolate is gone: nothing waits for this value any more
      }
    };
    /** Replies went ahead of the pending asynchronous answer: until it is given, all of them do. */
    let pushed = false;
    /**
     * Hands the guest the replies ready so far while its asynchronous submit still waits. Pushes
     * reach the guest in the order they are made, but an answer may overtake them (given before
     * the guest took its submit's reply, it arrives with that), so after a push the answer goes
     * empty: the replies still to come before it is given are pushed too (at the end of the
     * turn, see flush, or with the answer).
     */
    const pushNow = (): void => {
      pushed = true;
      const batch = outbox;
      outbox = '';
      bindings?.touch();
      try {
        pushRef?.applyIgnored(undefined, [batch]);
      } catch {
        // the isolate is gone: nothing waits for these replies any more
      }
    };
    const flush = (): void => {
      flushQueued = false;
      if (outbox === '') return;
      if (pushed) pushNow();
      else answerNow();
    };
    const queueFlush = (): void => {
      if (flushQueued) return;
      flushQueued = true;
      // One host turn's replies (a Promise.all burst settles many) share one crossing.
      setImmediate(flush);
    };
    const reply = (n: number, text: string): void => {
      running--;
      if (syncCalls.size > 0) {
        const name = syncCalls.get(n);
        syncCalls.delete(n);
        // Too long for the shared memory, it comes the asynchronous way after all, one crossing late
        // (a page of rows): later calls of the tool take that way from the start, as a slow tool's do.
        // So does a value sent in slices (`C…`): a guest blocked waiting in the crossing could not parse them meanwhile.
        if (name !== undefined && shared !== undefined && (text.length >= shared.capacity || text.charCodeAt(0) === 67)) bindings?.slowTool(name);
      }
      outbox += `${n} ${text.length} ${text}`;
      if (answer === undefined) return;
      // The last running call answers at once (sequential programs wait for it); others gather for a turn.
      if (running === 0) answerNow();
      // Unless they are big (a fan-out of pages): the guest then parses those ready while this thread makes the rest.
      else if (outbox.length >= PUSH_CHARS && answer !== syncAnswer) pushNow();
      else queueFlush();
    };
    // The synchronous crossing (see SharedReplies): the guest waits on `control[0]` until the host
    // answers, which it does within this turn; replies that do not fit go the asynchronous way.
    const answerShared = (batch: string): void => {
      const replies = shared;
      if (replies === undefined) return;
      const cut = batch.length <= replies.capacity ? batch.length : fittingReplies(batch, replies.capacity);
      if (cut > 0) replies.text.write(cut === batch.length ? batch : batch.slice(0, cut), 0, 'utf16le');
      Atomics.store(replies.control, 1, cut);
      if (Atomics.compareExchange(replies.control, 0, SHARED_WAITING, SHARED_ANSWERED) === SHARED_WAITING) {
        Atomics.notify(replies.control, 0);
        if (cut < batch.length) outbox = batch.slice(cut) + outbox;
      } else {
        // The guest stopped waiting (a safety net against a host that never answers): its next submit collects these.
        outbox = batch + outbox;
      }
    };
    let syncAnswer: ((batch: string) => void) | undefined;
    /** The end of the host turn a synchronous submit waits at most, while one is pending. */
    let syncTurn: NodeJS.Immediate | undefined;
    /** The calls of the latest synchronous submit still running: ordinal → tool name. */
    const syncCalls = new Map<number, string>();
    const endSyncTurn = (): void => {
      syncTurn = undefined;
      const pending = syncAnswer;
      syncAnswer = undefined;
      if (pending === undefined || answer !== pending) return;
      // These missed the turn: the runtime remembers their tools, so later runs send them asynchronously from the start.
      for (const name of syncCalls.values()) bindings?.slowTool(name);
      syncCalls.clear();
      answerNow();
    };
    const submit = (batch: string): Promise<string> | undefined => {
      // A synchronous submit (`S…`, sent fire-and-forget) holds an isolated-vm pool thread while its guest waits: always answered.
      const sync = batch.charCodeAt(0) === 83;
      if (bindings === undefined) {
        if (sync) answerShared('');
        return sync ? undefined : never;
      }
      bindings.touch();
      // An earlier asynchronous submit is answered now; an earlier synchronous one has been
      // answered already (the guest never submits while it waits), or the guest gave up on it.
      if (answer !== syncAnswer) answerNow();
      answer = undefined;
      if (sync) syncCalls.clear();
      const call = bindings.call;
      let at = sync ? 1 : 0;
      let reads: string | undefined;
      while (at < batch.length) {
        const colon = batch.indexOf(':', at);
        const nameEnd = colon + 1 + Number(batch.slice(at, colon));
        const colon2 = batch.indexOf(':', nameEnd);
        const argsEnd = colon2 + 1 + Number(batch.slice(nameEnd, colon2));
        // An entry without a name is not a call: the reads a recording guest made before the next one.
        if (nameEnd === colon + 1) {
          reads = batch.slice(colon2 + 1, argsEnd);
          at = argsEnd;
          continue;
        }
        const n = ++ordinal;
        running++;
        const name = batch.slice(colon + 1, nameEnd);
        if (sync) syncCalls.set(n, name);
        call(name, batch.slice(colon2 + 1, argsEnd), reads, (json) => pushChunk(n, json)).then(
          (text) => reply(n, text),
          () => reply(n, 'F'),
        );
        reads = undefined;
        at = argsEnd;
      }
      if (sync) {
        // At most one host turn: calls that finish sooner are answered as the last one ends (reply),
        // which cancels the turn's end. One still pending from an earlier submit serves this one: it
        // runs after the current turn's microtasks, so it never cuts a turn short.
        const pending = (replies: string): void => answerShared(replies);
        answer = syncAnswer = pending;
        if (running === 0) answerNow();
        else syncTurn ??= setImmediate(endSyncTurn);
        return undefined;
      }
      return new Promise<string>((resolve) => {
        answer = resolve;
        if (outbox === '') return;
        // Nothing left running to gather (replies a synchronous crossing could not carry): answer now.
        if (running === 0) answerNow();
        else queueFlush();
      });
    };
    // Host functions never throw: a host error crossing would carry a host stack.
    const refs = [
      new ivm.Reference((batch: unknown) => {
        try {
          return submit(String(batch));
        } catch {
          // a malformed batch (only a bootstrap bug makes one) submits nothing more; a synchronous one is still answered
          if (String(batch).charCodeAt(0) !== 83) return never;
          answerShared('');
          return undefined;
        }
      }),
      new ivm.Reference((level: unknown, text: unknown) => void bindings?.log(String(level), String(text))),
      new ivm.Reference((id: unknown, ms: unknown) => (bindings === undefined ? never : bindings.timer(Number(id), Number(ms)))),
      new ivm.Reference((id: unknown) => void bindings?.clearTimer(Number(id))),
      new ivm.Reference((thrown: unknown) => void bindings?.fail(String(thrown))),
    ];
    const script = await compileBootstrap(isolate, offThread);
    const install = (offThread ? await script.run(context, { reference: true }) : script.runSync(context, { reference: true })) as ivm.Reference<unknown>;
    script.release();
    const names = JSON.stringify({ reserved: RESERVED_GLOBALS, removed: REMOVED_GLOBALS });
    const installArgs = [...refs, names];
    const installOptions = { result: { reference: true } } as const;
    const api = (offThread ? await install.apply(undefined, installArgs, installOptions) : install.applySync(undefined, installArgs, installOptions)) as ivm.Reference<
      Record<'start' | 'push' | 'chunk' | 'reusable', unknown>
    >;
    install.release();
    const start = api.getSync('start', { reference: true }) as ivm.Reference<unknown>;
    pushRef = api.getSync('push', { reference: true }) as ivm.Reference<unknown>;
    chunkRef = api.getSync('chunk', { reference: true }) as ivm.Reference<unknown>;
    const reusable = api.getSync('reusable', { reference: true }) as ivm.Reference<unknown>;
    api.release();
    return {
      memoryMiB,
      isolate,
      context,
      start,
      reusable,
      bind(next) {
        bindings = next;
        shared = next.sharedReplies === undefined ? undefined : sharedReplies(next.sharedReplies);
        catastropheHandlers.set(isolate, next.catastrophe);
      },
      detach() {
        bindings = undefined;
        shared = undefined;
        answer = undefined;
        syncAnswer = undefined;
        pushRef = undefined;
        chunkRef = undefined;
        outbox = '';
        if (syncTurn !== undefined) clearImmediate(syncTurn);
        syncTurn = undefined;
        return running === 0;
      },
    };
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}

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
 * How long the isolate of an ended run may take to answer whether it is reusable, ms. A healthy
 * one answers in well under a millisecond; one that does not (a program's endless chain of
 * microtasks after it returned) is disposed, which ends that.
 */
const RECYCLE_PROBE_MS = 250;
/**
 * Heap in use (live, or garbage not yet collected: old contexts wait for a full collection) past
 * which an ended run's isolate is disposed rather than kept, bytes, and as a share of its heap
 * limit. Garbage is collected when a run needs the room, yet a program that fits a fresh isolate
 * could fail `memory` in one that earlier runs had left partly in use, and does not under this
 * bound (bench/RESULTS.md).
 */
const RECYCLE_MAX_HEAP_BYTES = 8 * 1024 * 1024;
const RECYCLE_MAX_HEAP_SHARE = 1 / 16;

/**
 * Readies the isolate of a run that ended cleanly (see RunControl.recycle) for another run: a
 * fresh context with the bootstrap, in the same isolate, which skips the isolate's constructor,
 * isolated-vm's default context and the disposal. Only if the old context can no longer run
 * anything by itself: the guest says so (`reusable`, asked as a task of its own, so after every
 * microtask of the program), and its heap is small (RECYCLE_MAX_HEAP_BYTES,
 * RECYCLE_MAX_HEAP_SHARE). The old context keeps nothing the new one can reach: its globals,
 * built-ins and host bindings are its own.
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
        const heap = isolate.getHeapStatisticsSync();
        return heap.used_heap_size <= Math.min(RECYCLE_MAX_HEAP_BYTES, prepared.memoryMiB * 1024 * 1024 * RECYCLE_MAX_HEAP_SHARE);
      })(),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), RECYCLE_PROBE_MS))),
    ]);
    clearTimeout(timer);
    prepared.start.release();
    prepared.reusable.release();
    prepared.context.release();
    if (!verdict || isolate.isDisposed) throw new Error('not reusable');
    catastropheHandlers.delete(isolate);
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
   * Called when a call of `name` crossed synchronously and missed the host's turn, or answered
   * more than the shared memory holds: either way its reply came the asynchronous way, one
   * crossing later than if the call had gone that way.
   */
  onSlowTool?: (name: string) => void;
  /**
   * Called instead of disposing the isolate when the run ended cleanly: its program settled on
   * its own and no tool call was in flight. The callee owns the isolate from then on; pass it to
   * {@link recycleIsolate} (or dispose it).
   */
  recycle?: (prepared: PreparedIsolate) => void;
  /**
   * Set by {@link runInIsolate} when the run starts, for a synchronous crossing: whether the
   * guest may spin on the shared state for a moment before blocking. Spinning saves
   * the thread wake-up of each call, but holds a core: allow it only while cores are spare.
   * Off until set.
   */
  allowSpin?: (allowed: boolean) => void;
}

/**
 * A nested call's outcome as the crossing takes it: the contract's, or a value already made JSON
 * text elsewhere (a sandbox process's parent sends it so).
 */
export type CallReply = SandboxCallOutcome | { ok: true; valueJson: string };

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
    if (outcome.ok) {
      if ('valueJson' in outcome) return `V\n${outcome.valueJson}`;
      const sliced = sendInSlices(outcome.value, sendSlice);
      if (sliced === undefined) return `V\n${JSON.stringify(outcome.value)}`;
      return sliced.path.length === 0 ? `C${sliced.count}` : `C${sliced.count}\n${JSON.stringify(sliced.path)}\n${sliced.frameJson}`;
    }
    if ('fatal' in outcome) {
      force({ kind: outcome.fatal.kind, message: outcome.fatal.message });
      return 'F';
    }
    return `E${JSON.stringify({ code: outcome.error.code, message: outcome.error.message, callId: outcome.error.callId })}`;
  };

  const touched = control?.touched ?? ((): void => undefined);
  const shared = control?.syncCalls === true ? createSharedReplies() : undefined;
  if (shared !== undefined && control !== undefined) {
    const words = new Int32Array(shared, 0, SHARED_SPIN_WORD + 1);
    control.allowSpin = (allowed) => void Atomics.store(words, SHARED_SPIN_WORD, allowed ? 1 : 0);
  }
  prepared.bind({
    touch: touched,
    sharedReplies: shared,
    slowTool: (name) => control?.onSlowTool?.(name),
    // Not async: each await is a microtask hop on every nested call.
    call: (name, argsJson, readsJson, sendSlice) => {
      if (forced !== undefined) return Promise.resolve('F');
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
    if (forced !== undefined) return { ok: false, logs, failure: forced };
    if (reply === undefined) return { ok: false, logs, failure: { kind: 'crashed', message: 'the sandbox stopped without a result; run the program again' } };
    if ('failure' in reply) return { ok: false, logs, failure: reply.failure };
    settled = true;
    const bar = reply.text.indexOf('|');
    const sent = Number(reply.text.slice(0, bar));
    // Log lines travel fire-and-forget and may still be queued behind the reply.
    if (received < sent) {
      await Promise.race([new Promise<void>((resolve) => (awaitLogs = { count: sent, resolve })), forcedPromise]);
      if (forced !== undefined) return { ok: false, logs, failure: forced };
    }
    return decode(reply.text.slice(bar + 1), logs, filename, limits.maxResultBytes);
  } catch (error) {
    if (forced !== undefined) return { ok: false, logs, failure: forced };
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

const HOST_FAILED = `E${JSON.stringify({ code: 'TOOL_FAILED', message: 'the host could not run this call', callId: '' })}`;

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
    shared === undefined ? { maxLogBytes, maxResultBytes, maxArgBytes } : { maxLogBytes, maxResultBytes, maxArgBytes, slowTools, syncWaitMs: control?.syncWaitMs ?? DEFAULT_SYNC_WAIT_MS };
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

function decode(text: string, logs: string[], filename: string, maxResultBytes: number): SandboxRunOutcome {
  const tag = text[0];
  const body = text.slice(1);
  switch (tag) {
    case 'U':
      return { ok: true, logs };
    case 'R': {
      const bytes = Buffer.byteLength(body);
      if (bytes > maxResultBytes) {
        return {
          ok: false,
          logs,
          failure: { kind: 'output-limit', message: `the returned value is ${bytes} bytes of JSON, over the ${maxResultBytes}-byte limit: return less (summarise, or page through the data)` },
        };
      }
      return { ok: true, logs, resultJson: body };
    }
    case 'I':
      return { ok: false, logs, failure: { kind: 'invalid-output', message: body } };
    case 'O':
      return { ok: false, logs, failure: { kind: 'output-limit', message: body } };
    default: {
      const described = describeException(body, filename);
      // V8 reports these as ordinary RangeErrors, but the cause is the heap limit.
      const kind = OUT_OF_MEMORY.test(described.message) ? 'memory' : 'exception';
      return { ok: false, logs, failure: { kind, ...described } };
    }
  }
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
