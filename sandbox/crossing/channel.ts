/**
 * The host's end of one context's crossing: it takes the guest's submits, runs their calls
 * through the run's bindings and delivers the replies by one of three ways.
 *
 * - **The answer** to the guest's latest asynchronous submit: replies travel back by settling the
 *   promise isolated-vm already awaits, far cheaper than a host→isolate call per reply. One host
 *   turn's replies (a Promise.all burst settles many) share it.
 * - **A push** ahead of that answer, when a fan-out's replies grow big: the guest parses those
 *   while this thread makes the rest. A big value's slices go the same way (crossing/value-slices.ts).
 * - **The shared memory**, for a synchronous submit: the guest blocks in `Atomics.wait` while the
 *   host answers within its turn (in-memory tools), two thread hops fewer per call. Nothing of
 *   isolated-vm waits, so disposing the isolate mid-wait leaves no crossing state behind.
 *
 * The channel is in one state at a time: no submit waiting (`idle`), an asynchronous submit
 * waiting (`awaiting`; `pushed` once replies went ahead of its answer, after which the rest
 * follows them and the answer carries none), the guest blocked on the shared memory (`blocked`),
 * or the run over (`detached`).
 */
import type ivm from 'isolated-vm';
import { PUSH_CHARS, SHARED_REPLY_BYTES } from '../tuning.ts';
import { fittingReplies, isSyncSubmit, readCalls, replyEntry, REPLY, SHARED, slowEntry } from './protocol.ts';

/** What the host answers to the guest; set per run, before the program starts. */
export interface Bindings {
  /** Runs one call; resolves to its reply text. `sendSlice`: where a big value may go a slice at a time first. */
  call(name: string, argsJson: string, readsJson: string | undefined, sendSlice: (json: string) => void): Promise<string>;
  log(level: string, text: string): void;
  timer(id: number, ms: number): Promise<string>;
  clearTimer(id: number): void;
  fail(thrownJson: string): void;
  catastrophe(message: string): void;
  /** Guest code may run (the host handed it something) or has run (it sent something): see RunControl.touched. */
  touch(): void;
  /** The memory of the synchronous crossing ({@link createSharedReplies}); none: calls cross asynchronously. */
  sharedReplies?: SharedArrayBuffer;
  /** A call crossed synchronously and missed the host's turn, or a reply (of any call) could not come through the shared memory. */
  slowTool(name: string): void;
}

/** Memory for one run's synchronous crossing: handed to the guest at start and to the host in its bindings. */
export function createSharedReplies(): SharedArrayBuffer {
  return new SharedArrayBuffer(SHARED.headerBytes + SHARED_REPLY_BYTES);
}

interface SharedReplies {
  readonly control: Int32Array;
  readonly text: Buffer;
  /** UTF-16 code units `text` holds. */
  readonly capacity: number;
}

type State = 'idle' | 'awaiting' | 'pushed' | 'blocked' | 'detached';

const NEVER = new Promise<string>(() => undefined);

export class Channel {
  #state: State = 'idle';
  #bindings: Bindings | undefined;
  #shared: SharedReplies | undefined;
  /** Reply entries not delivered yet. */
  #outbox = '';
  /** In `awaiting` and `pushed`: settles the asynchronous submit. */
  #resolve: ((batch: string) => void) | undefined;
  #flushQueued = false;
  #ordinal = 0;
  /** Calls started and not answered. */
  #running = 0;
  /** In `blocked`: the end of the host turn the guest waits at most. */
  #turnEnd: NodeJS.Immediate | undefined;
  /** The calls of the latest synchronous submit still running: ordinal → tool name. */
  readonly #blockedCalls = new Map<number, string>();
  /** The tools the guest was told are slow (made on the first). */
  #toldSlow: Set<string> | undefined;
  /** Characters of the values handed to the guest: its replies' and slices' text. */
  #receivedChars = 0;
  /** The guest's `push` and `chunk`, once installed. */
  #push: ivm.Reference<unknown> | undefined;
  #chunk: ivm.Reference<unknown> | undefined;

  /** The guest's entry points for pushes and slices. */
  connect(push: ivm.Reference<unknown>, chunk: ivm.Reference<unknown>): void {
    this.#push = push;
    this.#chunk = chunk;
  }

  bind(bindings: Bindings): void {
    this.#bindings = bindings;
    const buffer = bindings.sharedReplies;
    this.#shared =
      buffer === undefined
        ? undefined
        : { control: new Int32Array(buffer, 0, SHARED.headerBytes >> 2), text: Buffer.from(buffer, SHARED.headerBytes), capacity: (buffer.byteLength - SHARED.headerBytes) >> 1 };
  }

  get bindings(): Bindings | undefined {
    return this.#bindings;
  }

  /** How much text of tool values the guest was handed, characters. */
  get receivedChars(): number {
    return this.#receivedChars;
  }

  /** Cuts the guest off: no reply, push or binding reaches it any more. Returns whether no call was in flight. */
  detach(): boolean {
    this.#state = 'detached';
    this.#bindings = undefined;
    this.#shared = undefined;
    this.#resolve = undefined;
    this.#push = undefined;
    this.#chunk = undefined;
    this.#outbox = '';
    if (this.#turnEnd !== undefined) clearImmediate(this.#turnEnd);
    this.#turnEnd = undefined;
    return this.#running === 0;
  }

  /**
   * The guest's submit. A synchronous one (sent fire-and-forget) holds an isolated-vm pool thread
   * while its guest waits: it is always answered, through the shared memory, and returns nothing.
   */
  submit(batch: string): Promise<string> | undefined {
    const sync = isSyncSubmit(batch);
    const bindings = this.#bindings;
    if (bindings === undefined || this.#state === 'detached') {
      if (sync) this.#writeShared('');
      return sync ? undefined : NEVER;
    }
    bindings.touch();
    // An earlier asynchronous submit is answered now (possibly with nothing). An earlier
    // synchronous one was answered already, or its guest gave up waiting: its replies wait here.
    if (this.#state === 'awaiting' || this.#state === 'pushed') this.#answer();
    this.#state = 'idle';
    if (sync) this.#blockedCalls.clear();
    readCalls(batch, (name, argsJson, readsJson) => {
      const n = ++this.#ordinal;
      this.#running++;
      if (sync) this.#blockedCalls.set(n, name);
      bindings.call(name, argsJson, readsJson, (json) => this.#sendSlice(n, json)).then(
        (text) => this.#reply(n, name, text),
        () => this.#reply(n, name, REPLY.fatal),
      );
    });
    if (sync) {
      // At most one host turn: calls that finish sooner are answered as the last one ends, which
      // cancels the turn's end. One still pending from an earlier submit serves this one: it runs
      // after the current turn's microtasks, so it never cuts a turn short.
      this.#state = 'blocked';
      if (this.#running === 0) this.#answer();
      else this.#turnEnd ??= setImmediate(this.#endTurn);
      return undefined;
    }
    return new Promise<string>((resolve) => {
      this.#state = 'awaiting';
      this.#resolve = resolve;
      if (this.#outbox === '') return;
      // Replies the shared memory could not carry, nothing left running to gather: answer now.
      if (this.#running === 0) this.#answer();
      else this.#queueFlush();
    });
  }

  /** A malformed submit (only a bootstrap bug makes one) runs nothing; a synchronous one is still answered. */
  refuse(batch: string): Promise<string> | undefined {
    if (!isSyncSubmit(batch)) return NEVER;
    this.#writeShared('');
    return undefined;
  }

  #reply(n: number, name: string, text: string): void {
    this.#running--;
    if (this.#blockedCalls.size > 0) this.#blockedCalls.delete(n);
    // Too long for the shared memory, or sent in slices (a blocked guest could not parse them
    // meanwhile): later calls of the tool go the asynchronous way from the start. Every such reply
    // renews that, however the call came: a tool that keeps answering big is never tried blocked again.
    const shared = this.#shared;
    if (shared !== undefined && (text.length >= shared.capacity || text.startsWith(REPLY.sliced))) this.#markSlow(name);
    this.#outbox += replyEntry(n, text);
    this.#receivedChars += text.length;
    if (this.#state === 'idle' || this.#state === 'detached') return;
    // The last running call answers at once (sequential programs wait for it); others gather for a turn.
    if (this.#running === 0) this.#answer();
    // Unless they are big (a fan-out of pages): the guest then parses those ready while this thread makes the rest.
    else if (this.#state !== 'blocked' && this.#outbox.length >= PUSH_CHARS) this.#pushNow();
    else this.#queueFlush();
  }

  /** Delivers the outbox as the answer the guest waits for, if it waits. */
  #answer(): void {
    const state = this.#state;
    if (state !== 'awaiting' && state !== 'pushed' && state !== 'blocked') return;
    if (this.#turnEnd !== undefined) {
      clearImmediate(this.#turnEnd);
      this.#turnEnd = undefined;
    }
    this.#bindings?.touch();
    if (state === 'pushed' && this.#outbox !== '') this.#pushNow();
    const resolve = this.#resolve;
    this.#resolve = undefined;
    this.#state = 'idle';
    const batch = this.#outbox;
    this.#outbox = '';
    if (state === 'blocked') this.#writeShared(batch);
    else resolve?.(batch);
  }

  /** Hands the guest the replies ready so far while its asynchronous submit still waits. */
  #pushNow(): void {
    this.#state = 'pushed';
    const batch = this.#outbox;
    this.#outbox = '';
    this.#bindings?.touch();
    try {
      this.#push?.applyIgnored(undefined, [batch]);
    } catch {
      // the isolate is gone: nothing waits for these replies any more
    }
  }

  /**
   * Hands the guest the next slice of call `n`'s value: a task of the isolate's own, which runs as
   * soon as the guest is idle, while this thread makes the next. The call's reply may overtake the
   * slices: the guest settles the call when the last has come.
   */
  #sendSlice(n: number, json: string): void {
    this.#receivedChars += json.length;
    this.#bindings?.touch();
    try {
      this.#chunk?.applyIgnored(undefined, [n, json]);
    } catch {
      // the isolate is gone: nothing waits for this value any more
    }
  }

  readonly #flush = (): void => {
    this.#flushQueued = false;
    if (this.#outbox === '') return;
    if (this.#state === 'pushed') this.#pushNow();
    else this.#answer();
  };

  #queueFlush(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    setImmediate(this.#flush);
  }

  /** The host's turn ended with calls of a synchronous submit still running: they are slow tools. */
  readonly #endTurn = (): void => {
    this.#turnEnd = undefined;
    if (this.#state !== 'blocked') return;
    for (const name of this.#blockedCalls.values()) this.#markSlow(name);
    this.#blockedCalls.clear();
    this.#answer();
  };

  /** The one judgement of a slow tool: the runtime remembers it for later runs, and the guest is told with the replies, once. */
  #markSlow(name: string): void {
    this.#bindings?.slowTool(name);
    if (this.#toldSlow?.has(name) === true) return;
    (this.#toldSlow ??= new Set()).add(name);
    this.#outbox += slowEntry(name);
  }

  /** Writes what fits of `batch` for the blocked guest and wakes it; the rest, or all if it gave up waiting, stays for its next submit. */
  #writeShared(batch: string): void {
    const shared = this.#shared;
    if (shared === undefined) return;
    const cut = batch.length <= shared.capacity ? batch.length : fittingReplies(batch, shared.capacity);
    if (cut > 0) shared.text.write(cut === batch.length ? batch : batch.slice(0, cut), 0, 'utf16le');
    Atomics.store(shared.control, SHARED.lengthWord, cut);
    if (Atomics.compareExchange(shared.control, SHARED.stateWord, SHARED.waiting, SHARED.answered) === SHARED.waiting) {
      Atomics.notify(shared.control, SHARED.stateWord);
      if (cut < batch.length) this.#outbox = batch.slice(cut) + this.#outbox;
    } else {
      this.#outbox = batch + this.#outbox;
    }
  }
}
