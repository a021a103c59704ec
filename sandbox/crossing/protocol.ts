/**
 * The crossing's wire: what the guest (guest/calls.ts) and the host (crossing/channel.ts,
 * isolate-run.ts) say to each other across the isolate boundary, and the memory of the
 * synchronous crossing. Strings only: a host→isolate copy of a string is the cheapest there is.
 * Defined here once; the guest, which may import nothing at run time, is handed {@link WIRE} as
 * an install argument, with its tuning (sandbox/tuning.ts, GUEST).
 *
 * - The guest's submit: the calls made in one microtask turn, each
 *   `<name length>:<name><args length>:<argsJson>` (the host numbers them 1, 2, … in stream
 *   order); an entry with an empty name carries, as its arguments, the reads a recording guest
 *   made before the next call. '' asks for replies only. Prefixed {@link WIRE}.syncPrefix, it is
 *   the synchronous crossing: sent fire-and-forget while the guest blocks on the shared memory.
 * - The host's replies, answering a submit (its promise, or the shared memory) or pushed unasked:
 *   each `<ordinal> <reply length> <reply>`, the reply starting with a {@link REPLY} kind. An
 *   entry of ordinal {@link WIRE}.slowOrdinal names a tool the host judged slow instead: the guest
 *   sends its later calls asynchronously.
 * - A run's end: `<log lines sent>|` and a {@link RESULT} kind with its text.
 */
import type { JsonValue } from '../../src/json.ts';
import type { SandboxCallOutcome } from '../../src/sandbox-runtime.ts';
import type { GUEST } from '../tuning.ts';
import { sendInSlices } from './value-slices.ts';

/** The first character of a call's reply. */
export const REPLY = {
  /** `V\n<value JSON>` */
  value: 'V',
  /** `C<slices>`, or `C<slices>\n<keys JSON>\n<object JSON>`: the value came as slices (crossing/value-slices.ts). */
  sliced: 'C',
  /** `E<{code,message,callId} JSON>`: the call failed. */
  error: 'E',
  /** `F`: the run is ending; the call is not completed. */
  fatal: 'F',
} as const;

/** The first character of the text after `|` in a run's end. */
export const RESULT = {
  /** The program returned undefined. */
  none: 'U',
  /** `R<JSON>`: its value. */
  value: 'R',
  /** `I<message>`: its value is not lossless JSON. */
  invalid: 'I',
  /** `O<message>`: its value is over the result limit. */
  tooLarge: 'O',
  /** `E<{message,stack} JSON>`: it threw. */
  thrown: 'E',
} as const;

/**
 * The synchronous crossing's memory: Int32 words, then the replies as UTF-16. The guest stores
 * `waiting` in the state word, submits, and blocks; the host writes the replies ready within its
 * turn, their length, swaps the state to `answered` and wakes it. A guest that gives up waiting
 * swaps it to `abandoned` first, and its next submit collects the replies.
 */
export const SHARED = {
  stateWord: 0,
  lengthWord: 1,
  waiting: 1,
  answered: 2,
  abandoned: 3,
  headerBytes: 8,
} as const;

/** Everything of the wire the guest needs, handed to it at install. */
export const WIRE = { reply: REPLY, result: RESULT, syncPrefix: 'S', slowOrdinal: 0, shared: SHARED } as const;
export type Wire = typeof WIRE & { tuning: typeof GUEST };

/**
 * A nested call's outcome as the crossing takes it: the contract's, or a value already made JSON
 * text elsewhere (a sandbox child's parent sends it so).
 */
export type CallReply = SandboxCallOutcome | { ok: true; valueJson: string };

/** The reply for a host that could not run the call at all. */
export const HOST_FAILED = `${REPLY.error}${JSON.stringify({ code: 'TOOL_FAILED', message: 'the host could not run this call', callId: '' })}`;

/**
 * A call's reply text, for anything but a fatal outcome (the channel ends the run on one). A big
 * value goes to `sendSlice` a slice at a time first, and the reply says how many went.
 */
export function encodeReply(outcome: Exclude<CallReply, { fatal: unknown }>, sendSlice: (json: string) => void): string {
  if (!outcome.ok) return `${REPLY.error}${JSON.stringify({ code: outcome.error.code, message: outcome.error.message, callId: outcome.error.callId })}`;
  if ('valueJson' in outcome) return `${REPLY.value}\n${outcome.valueJson}`;
  return encodeValue(outcome.value, sendSlice, outcome.onDelivered);
}

function encodeValue(value: JsonValue, sendSlice: (json: string) => void, onDelivered: ((bytes: number) => void) | undefined): string {
  let sliceBytes = 0;
  const counted = onDelivered === undefined ? sendSlice : (json: string) => {
    sliceBytes += Buffer.byteLength(json);
    sendSlice(json);
  };
  const sliced = sendInSlices(value, counted);
  if (sliced === undefined) {
    const json = JSON.stringify(value);
    onDelivered?.(Buffer.byteLength(json));
    return `${REPLY.value}\n${json}`;
  }
  // The slices joined: one array's brackets for each slice's, a comma between slices; in a member's frame, in place of its `null`.
  const array = sliceBytes - (sliced.count - 1);
  onDelivered?.(sliced.path.length === 0 ? array : array + Buffer.byteLength(sliced.frameJson) - 'null'.length);
  return sliced.path.length === 0 ? `${REPLY.sliced}${sliced.count}` : `${REPLY.sliced}${sliced.count}\n${JSON.stringify(sliced.path)}\n${sliced.frameJson}`;
}

/** One reply entry of a batch. */
export function replyEntry(ordinal: number, reply: string): string {
  return `${ordinal} ${reply.length} ${reply}`;
}

/** The entry telling the guest that `name` is slow (see SlowTools). */
export function slowEntry(name: string): string {
  return replyEntry(WIRE.slowOrdinal, name);
}

/** Characters of whole reply entries at the start of `batch` that fit in `capacity`. */
export function fittingReplies(batch: string, capacity: number): number {
  let at = 0;
  for (;;) {
    const space = batch.indexOf(' ', at);
    const space2 = batch.indexOf(' ', space + 1);
    const end = space2 + 1 + Number(batch.slice(space + 1, space2));
    if (space < 0 || space2 < 0 || end > capacity) return at;
    at = end;
  }
}

/** Whether `batch` is a synchronous submit. */
export function isSyncSubmit(batch: string): boolean {
  return batch.startsWith(WIRE.syncPrefix);
}

/**
 * Reads the calls of a submit, in order: `onCall` gets each name, its arguments' JSON and the
 * reads made before it, if any. Throws on a malformed batch (only a bootstrap bug makes one).
 */
export function readCalls(batch: string, onCall: (name: string, argsJson: string, readsJson: string | undefined) => void): void {
  let at = isSyncSubmit(batch) ? WIRE.syncPrefix.length : 0;
  let reads: string | undefined;
  while (at < batch.length) {
    const colon = batch.indexOf(':', at);
    const nameEnd = colon + 1 + Number(batch.slice(at, colon));
    const colon2 = batch.indexOf(':', nameEnd);
    const argsEnd = colon2 + 1 + Number(batch.slice(nameEnd, colon2));
    if (colon < 0 || colon2 < 0 || !Number.isFinite(argsEnd)) throw new Error('a malformed submit');
    if (nameEnd === colon + 1) reads = batch.slice(colon2 + 1, argsEnd);
    else {
      onCall(batch.slice(colon + 1, nameEnd), batch.slice(colon2 + 1, argsEnd), reads);
      reads = undefined;
    }
    at = argsEnd;
  }
}
