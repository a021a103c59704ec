/**
 * A tool call as the guest tracks it, and how a reply from the host settles
 * it: a value, parsed and frozen (or joined from the slices that came ahead
 * of it), or a ToolCallError that names the program's line.
 */

import {
  arrayProto,
  arrayPush,
  defineProperty,
  freeze,
  hasOwn,
  isArray,
  jsonParse,
  objectKeys,
  promiseThenOf,
  reflectApply,
  setPrototypeOf,
  stringIndexOf,
  stringSlice,
} from './builtins.ts';
import { ToolCallError } from './errors.ts';
import { deepFreeze } from './lossless-json.ts';
import { REPLY_ERROR, REPLY_SLICED, REPLY_VALUE } from './wire.ts';

export interface CallRecord {
  name: string;
  ordinal: number;
  handled: boolean;
  settled: boolean;
  /** Where the program made the call, for its error; not yet captured while the call crosses inside its stub. */
  site?: { stack?: unknown };
  /** A failure that arrived before the site was captured (settleCall waits for the stub to capture it). */
  deferred?: string;
  /** A value that came a slice at a time (`chunk`): the slices, each an array of elements already frozen. */
  slices?: unknown[];
  promise?: Promise<unknown>;
  resolve?: (value: unknown) => void;
  reject?: (error: unknown) => void;
}
export const ignore = (): void => undefined;
/**
 * Rejects a call's promise. An unawaited call is reported by noteForgotten, not as an unhandled
 * rejection: a handler is attached now, only to a call nobody handles yet (a call that succeeds,
 * or was awaited, costs no extra reaction).
 */
export const rejectCall = (record: CallRecord, promise: Promise<unknown>, reject: (error: unknown) => void, error: unknown): void => {
  if (!record.handled) promiseThenOf(promise, undefined, ignore);
  reject(error);
};

/** The failing call's own site (the model's line), not the bootstrap's. */
export const failure = (name: string, code: string, callId: string, message: string, site: { stack?: unknown }): ToolCallError => {
  const error = new ToolCallError(name, code, callId, message);
  try {
    const stack = site.stack;
    if (typeof stack === 'string') {
      const frames = stack.split('\n').slice(1).filter((line) => !line.includes('ptc-bootstrap.js'));
      defineProperty(error, 'stack', { value: [`ToolCallError: ${message}`, ...frames].join('\n'), writable: true, configurable: true });
    }
  } catch {
    // a program-installed Error.prepareStackTrace threw: keep the bootstrap's stack
  }
  return error;
};
/** Settles a call with its reply: a value (whole, or joined from its slices), or a ToolCallError. */
export const settleCall = ((record: CallRecord, text: string): void => {
  record.settled = true;
  if (record.site === undefined && text[0] !== REPLY_VALUE && text[0] !== REPLY_SLICED) {
    // Crossing inside its stub, which captures the site and settles it (a value needs no site).
    record.deferred = text;
    return;
  }
  const { name } = record;
  const site = record.site as { stack?: unknown };
  const resolve = record.resolve as (value: unknown) => void;
  const promise = record.promise as Promise<unknown>;
  const rejectIt = record.reject as (error: unknown) => void;
  record.site = record.promise = record.resolve = record.reject = undefined;
  if (text[0] === REPLY_VALUE) {
    let value: unknown;
    try {
      value = jsonParse(stringSlice(text, stringIndexOf(text, '\n') + 1));
    } catch {
      return rejectCall(record, promise, rejectIt, failure(name, 'INVALID_TOOL_OUTPUT', '', 'the host sent a value that is not JSON', site));
    }
    resolve(deepFreeze(value));
  } else if (text[0] === REPLY_SLICED) {
    // The slices joined in order; each one's elements were frozen as it came. Built without a
    // prototype, so that no index setter a program put on Array.prototype sees the elements.
    const slices = record.slices as unknown[];
    record.slices = undefined;
    const value = setPrototypeOf([], null) as unknown[];
    for (let s = 0; s < slices.length; s++) {
      const slice = slices[s];
      if (!isArray(slice)) {
        return rejectCall(record, promise, rejectIt, failure(name, 'INVALID_TOOL_OUTPUT', '', 'the host sent a value that is not JSON', site));
      }
      // Pushed by the built-in (a slice is at most a thousand elements, well within its argument
      // limit): no loop for this context's cold JIT to run. The target has no prototype, as above.
      reflectApply(arrayPush, value, slice as unknown[]);
    }
    const joined = freeze(setPrototypeOf(value, arrayProto));
    const line = stringIndexOf(text, '\n');
    if (line < 0) return resolve(joined);
    // `C<count>\n<keys>\n<object>`: the slices make the member down those keys of the object, whose
    // null there they replace (its place among the keys kept); the rest is frozen here.
    let frame: unknown;
    let keys: unknown;
    try {
      const line2 = stringIndexOf(text, '\n', line + 1);
      keys = jsonParse(stringSlice(text, line + 1, line2));
      frame = jsonParse(stringSlice(text, line2 + 1));
    } catch {
      frame = undefined;
    }
    // The objects down the path, each a plain object holding the next key.
    const path = isArray(keys) ? (keys as unknown[]) : [];
    const holders = setPrototypeOf([], null) as Record<string, unknown>[];
    let node = frame;
    for (let k = 0; k < path.length; k++) {
      if (typeof path[k] !== 'string' || typeof node !== 'object' || node === null || isArray(node) || !hasOwn(node, path[k] as string)) {
        node = undefined;
        break;
      }
      holders[k] = node as Record<string, unknown>;
      node = (node as Record<string, unknown>)[path[k] as string];
    }
    if (path.length === 0 || node !== null) {
      return rejectCall(record, promise, rejectIt, failure(name, 'INVALID_TOOL_OUTPUT', '', 'the host sent a value that is not JSON', site));
    }
    // From the deepest holder up: its other members frozen, the joined array (or the holder below) in place, itself.
    let member: unknown = joined;
    for (let k = path.length - 1; k >= 0; k--) {
      const holder = holders[k];
      const names = objectKeys(holder);
      for (let n = 0; n < names.length; n++) if (names[n] !== path[k]) deepFreeze(holder[names[n]]);
      defineProperty(holder, path[k] as string, { value: member, writable: true, enumerable: true, configurable: true });
      member = freeze(holder);
    }
    resolve(member);
  } else if (text[0] === REPLY_ERROR) {
    let e: { code: string; message: string; callId: string };
    try {
      e = jsonParse(stringSlice(text, 1)) as { code: string; message: string; callId: string };
    } catch {
      e = { code: 'TOOL_FAILED', message: 'the host sent an unreadable error', callId: '' };
    }
    rejectCall(record, promise, rejectIt, failure(name, e.code, e.callId, e.message, site));
  } else {
    rejectCall(record, promise, rejectIt, failure(name, 'ABORTED', '', 'the run is ending: this call was not completed', site));
  }
});
