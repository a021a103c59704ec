/**
 * Tool calls: the stubs on `tools`, each call's promise, and the crossing to
 * the host. The calls of one microtask turn go as one batch; a call alone in
 * its turn may cross synchronously inside its stub (shared memory), the rest
 * asynchronously, the host answering with every reply ready by then.
 */

import {
  atomicsCompareExchange,
  atomicsLoad,
  atomicsStore,
  atomicsWait,
  captureStackTrace,
  create,
  defineProperty,
  freeze,
  fromCharCode,
  hostCall,
  hostSend,
  Int32ArrayCtor,
  isArray,
  jsonParse,
  jsonStringify,
  now,
  parseIntCtor,
  PromiseCtor,
  promiseThenOf,
  reflectApply,
  RESOLVED,
  setPrototypeOf,
  StringCtor,
  stringIndexOf,
  stringSlice,
  then,
  Uint16ArrayCtor,
} from './builtins.ts';
import { type CallRecord, failure, ignore, rejectCall, settleCall } from './call-replies.ts';
import { notice } from './console.ts';
import { submitRef } from './host.ts';
import { argsJsonText, deepFreeze, type Violation } from './lossless-json.ts';
import { recordedReads, readsEntry } from './reads.ts';
import { config, returned } from './run-state.ts';
import {
  ABANDONED,
  LENGTH_WORD,
  MAX_BATCH,
  REPLY_SLICED,
  SHARED_HEADER_BYTES,
  SITES_PER_TURN,
  SLOW_ORDINAL,
  STATE_WORD,
  SYNC_MAX_CALLS,
  SYNC_PREFIX,
  WAITING,
} from './wire.ts';

// Internal arrays have no prototype: an index setter or a `push` a program put on Array.prototype never sees a record.
const records = setPrototypeOf([], null) as CallRecord[];
class ToolPromise<T> extends PromiseCtor<T> {
  #record: CallRecord;
  static override get [Symbol.species](): PromiseConstructor {
    return PromiseCtor;
  }
  constructor(executor: (resolve: (v: T) => void, reject: (e: unknown) => void) => void, record: CallRecord) {
    super(executor);
    this.#record = record;
  }
  override then<A = T, B = never>(onOk?: ((v: T) => A | PromiseLike<A>) | null, onErr?: ((e: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    this.#record.handled = true;
    // An `await` calls this from a later microtask: the turn that made the call is over.
    newTurn();
    return promiseThenOf(this, onOk, onErr) as Promise<A | B>;
  }
}
freeze(ToolPromise.prototype);
// One executor for every call's promise (no closure per call): it hands over the settlers.
let capturedResolve: ((value: unknown) => void) | undefined;
let capturedReject: ((error: unknown) => void) | undefined;
const captureSettlers = ((resolve: (value: unknown) => void, reject: (error: unknown) => void): void => {
  capturedResolve = resolve;
  capturedReject = reject;
});

const invalidArgs = (name: string, message: string, site: { stack?: unknown }): Promise<never> => {
  const record: CallRecord = { name, ordinal: 0, handled: false, settled: true };
  records[records.length] = record;
  let reject: (error: unknown) => void = ignore;
  const promise = new ToolPromise<never>((_resolve, rejectIt) => (reject = rejectIt), record);
  rejectCall(record, promise, reject, failure(name, 'INVALID_ARGS', '', message, site));
  return promise;
};
let ordinal = 0;
const makeStub = ((name: string): ((args: unknown) => Promise<unknown>) => {
  // The call site is captured only where it may be needed: capturing costs about a fifth of a call.
  const siteHere = ((): { stack?: unknown } => {
    const site: { stack?: unknown } = {};
    captureStackTrace(site, stub);
    return site;
  });
  const stub = (function stub(args: unknown): Promise<unknown> {
    if (typeof args !== 'object' || args === null || isArray(args)) {
      return invalidArgs(name, `tools[${jsonStringify(name)}] takes one JSON object as its argument, got ${args === null ? 'null' : isArray(args) ? 'an array' : typeof args}: pass an object such as {}`, siteHere());
    }
    let argsJson: string;
    try {
      argsJson = argsJsonText(args);
    } catch (error) {
      const v = error as Violation;
      return invalidArgs(name, `tool arguments must be lossless JSON: ${v.path} ${v.message}; pass an object such as {}`, siteHere());
    }
    // Characters are a lower bound of the UTF-8 bytes: never refuses what the host (exact bytes) would accept.
    if (argsJson.length > config.maxArgBytes) {
      return invalidArgs(name, `tool arguments are ${argsJson.length} characters of JSON, over the ${config.maxArgBytes}-byte limit for one call: pass less per call (split the data over several calls)`, siteHere());
    }
    // Alone in its turn (the common `await tools.x(…)`), a call to a tool that answers within the host's
    // turn crosses synchronously here, inside its stub, rather than from the turn's end. The program's
    // frame is then still below this one: the site is captured only if the call failed or missed the turn.
    // One such call per turn: the calls after it in the same turn (a fan-out) gather as one batch and overlap.
    const now = !crossedInTurn && outbox === '' && sharedControl !== undefined && !returned && slowTools[name] !== true;
    // A fan-out past SITES_PER_TURN calls in one turn is a loop over one line: its later calls share the last site.
    let site: { stack?: unknown } | undefined;
    if (!now) site = sitesInTurn++ < SITES_PER_TURN || turnSite === undefined ? (turnSite = siteHere()) : turnSite;
    const record: CallRecord = { name, ordinal: ++ordinal, handled: false, settled: false, site, deferred: undefined, promise: undefined, resolve: undefined, reject: undefined };
    records[records.length] = record;
    const promise = new ToolPromise<unknown>(captureSettlers, record);
    record.promise = promise;
    record.resolve = capturedResolve;
    record.reject = capturedReject;
    waiting[record.ordinal] = record;
    waitingCount++;
    const entry = recordedReads === undefined ? `${name.length}:${name}${argsJson.length}:${argsJson}` : `${readsEntry()}${name.length}:${name}${argsJson.length}:${argsJson}`;
    if (now) {
      crossedInTurn = true;
      exchange(entry, true);
      if (!record.settled || record.deferred !== undefined) {
        record.site = siteHere();
        const deferred = record.deferred;
        record.deferred = undefined;
        if (deferred !== undefined) settleCall(record, deferred);
      }
      return promise;
    }
    outbox += entry;
    if (slowTools[name] !== true) batchHasFast = true;
    // A bounded batch goes at once: the host learns of a call-limit breach while a flood is still being made.
    if (++batched >= MAX_BATCH) flushCalls();
    else if (!flushQueued) {
      flushQueued = true;
      promiseThenOf(RESOLVED, flushLater);
    }
    return promise;
  });
  return stub;
});

// Batching: one host crossing per microtask turn; its answer carries the replies ready by then.
/** Calls awaiting their reply, by ordinal; no prototype, so no inherited setter sees a store. */
const waiting = setPrototypeOf([], null) as (CallRecord | undefined)[];
export let waitingCount = 0;
let outbox = '';
let batched = 0;
let flushQueued = false;
/** A call crossed inside its stub since the program last yielded (see the stub). */
let crossedInTurn = false;
/** Call sites captured since the program last yielded (at most SITES_PER_TURN), and the latest. */
let sitesInTurn = 0;
let turnSite: { stack?: unknown } | undefined;
const newTurn = ((): void => {
  crossedInTurn = false;
  sitesInTurn = 0;
  turnSite = undefined;
});
/** Submits whose answer has not arrived yet. */
let exchanges = 0;
/** Tools the host judged slow (wire.slowOrdinal): their calls go the async way. */
const slowTools = create(null) as Record<string, true | undefined>;
let batchHasFast = false;
// The synchronous crossing's memory (wire.shared): its control words, then the replies as UTF-16.
// Views are made with the captured constructors, never derived (`subarray` would ask the
// program's species for a view of this memory).
let sharedBuffer: SharedArrayBuffer | undefined;
let sharedControl: Int32Array | undefined;
/** Offered by the host at start: the synchronous crossing's memory, and the tools it already judged slow. */
export const useSharedMemory = ((buffer: SharedArrayBuffer, slow: string[] | undefined): void => {
  sharedBuffer = buffer;
  sharedControl = new Int32ArrayCtor(buffer, 0, SHARED_HEADER_BYTES >> 2);
  if (slow !== undefined) for (let i = 0; i < slow.length; i++) slowTools[slow[i]] = true;
});
const DECODE_CHUNK = 8192;
/** Replies the host wrote into shared memory, or undefined if it never answered. */
const exchangeShared = ((buffer: SharedArrayBuffer, control: Int32Array, batch: string): string | undefined => {
  // The Atomics functions and Date.now ignore `this`: the captured ones are called directly.
  atomicsStore(control, STATE_WORD, WAITING);
  hostSend(submitRef, [`${SYNC_PREFIX}${batch}`]);
  // A wake-up is no answer by itself: the host's notify for the previous crossing can land in this one's wait.
  const deadline = now() + (config.syncWaitMs as number);
  while (atomicsLoad(control, STATE_WORD) === WAITING) {
    const left = deadline - now();
    if (left <= 0 || atomicsWait(control, STATE_WORD, WAITING, left) === 'timed-out') {
      if (atomicsCompareExchange(control, STATE_WORD, WAITING, ABANDONED) === WAITING) return undefined;
    }
  }
  const length = atomicsLoad(control, LENGTH_WORD);
  let replies = '';
  for (let at = 0; at < length; at += DECODE_CHUNK) {
    const end = at + DECODE_CHUNK < length ? at + DECODE_CHUNK : length;
    replies += reflectApply(fromCharCode, undefined, new Uint16ArrayCtor(buffer, SHARED_HEADER_BYTES + 2 * at, end - at)) as string;
  }
  return replies;
});
const exchange = (function exchange(batch: string, sync: boolean): void {
  // Hybrid crossing: a tool answered within the host's turn (in-memory tools) comes back on
  // the same crossing, without the two thread hops of an async apply. The host bounds the wait
  // to one turn, so a slow tool holds no pool thread: its reply comes by the async path below.
  // Not once the program has returned: calls chained off unawaited ones would then run as one
  // microtask chain that never yields, and the run's end would wait for the call limit.
  if (sync && sharedControl !== undefined && !returned) {
    const replies = exchangeShared(sharedBuffer as SharedArrayBuffer, sharedControl, batch);
    if (replies !== undefined) deliver(replies);
    // Replies still to come (slow tools, or more than the shared memory holds) come the async way.
    if (exchanges === 0 && waitingCount > 0) exchange('', false);
    return;
  }
  exchanges++;
  then(hostCall(submitRef, [batch]), onReplies, onLost);
});
const onReplies = (function onReplies(batch: unknown): void {
  exchanges--;
  deliver(batch as string);
  // Calls still running and no submit pending: ask for the next replies.
  if (exchanges === 0 && waitingCount > 0) exchange('', false);
});
const onLost = (): void => {
  exchanges--;
};
const flushCalls = (function flushCalls(): void {
  const batch = outbox;
  // A fan-out (Promise.all over many calls) goes the async way: blocked in a synchronous crossing,
  // the guest could not hand over its next batch while the host works through this one.
  const sync = batchHasFast && batched <= SYNC_MAX_CALLS;
  outbox = '';
  batched = 0;
  batchHasFast = false;
  exchange(batch, sync);
});
const flushLater = (function flushLater(): void {
  flushQueued = false;
  newTurn();
  if (outbox !== '') flushCalls();
});
export const deliver = ((batch: string): void => {
  let at = 0;
  while (at < batch.length) {
    const space = stringIndexOf(batch, ' ', at);
    const ordinalOf = parseIntCtor(stringSlice(batch, at, space), 10);
    const space2 = stringIndexOf(batch, ' ', space + 1);
    const length = parseIntCtor(stringSlice(batch, space + 1, space2), 10);
    const text = stringSlice(batch, space2 + 1, space2 + 1 + length);
    at = space2 + 1 + length;
    if (ordinalOf === SLOW_ORDINAL) {
      slowTools[text] = true;
      continue;
    }
    const record = waiting[ordinalOf];
    if (record === undefined) continue;
    const slices = chunkSlices[ordinalOf];
    if (text[0] === REPLY_SLICED) {
      // A value sent in slices: settled once the last has come (a push may come after this reply).
      if ((slices === undefined ? 0 : slices.length) < parseIntCtor(stringSlice(text, 1), 10)) {
        chunkReplies[ordinalOf] = text;
        continue;
      }
      record.slices = slices;
    }
    // Written only when slices came (a value sent whole after them, by a hook, leaves them behind):
    // a write per call would grow this array to the run's last ordinal.
    if (slices !== undefined) chunkSlices[ordinalOf] = undefined;
    waiting[ordinalOf] = undefined;
    waitingCount--;
    settleCall(record, text);
  }
});
// Values the host sends a slice at a time (a big array, parsed here while the host copies the
// rest): by call ordinal, the slices come so far; and a call's reply (`C<count>`) that came first.
const chunkSlices = setPrototypeOf([], null) as (unknown[] | undefined)[];
const chunkReplies = setPrototypeOf([], null) as (string | undefined)[];
export const chunk = (function chunk(ordinalArg: number, json: string): void {
  const ordinalOf = +ordinalArg;
  if (waiting[ordinalOf] === undefined) return;
  let slice: unknown;
  try {
    slice = deepFreeze(jsonParse(StringCtor(json)));
  } catch {
    slice = undefined;
  }
  const slices = chunkSlices[ordinalOf] ?? (chunkSlices[ordinalOf] = setPrototypeOf([], null) as unknown[]);
  slices[slices.length] = slice;
  const reply = chunkReplies[ordinalOf];
  if (reply === undefined) return;
  chunkReplies[ordinalOf] = undefined;
  deliver(`${ordinalOf} ${reply.length} ${reply}`);
});

/** The `tools` object: a stub per tool name. */
export const buildTools = ((toolNames: string[]): Record<string, unknown> => {
  const tools = create(null) as Record<string, unknown>;
  for (const name of toolNames) {
    defineProperty(tools, name, { value: makeStub(name), enumerable: true });
  }
  return freeze(tools);
});

/** After the program: a notice for each call it never awaited. */
export const noteForgotten = ((): void => {
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    if (record.handled) continue;
    const which = record.ordinal > 0 ? `call #${record.ordinal}, ` : '';
    const state = record.settled ? 'its outcome was dropped' : 'it was still running and is cancelled';
    notice(`[ptc] warning: tools[${jsonStringify(record.name)}](…) (${which}never awaited): ${state}; await every tool call`);
  }
});
