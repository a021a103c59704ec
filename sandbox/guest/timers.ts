/**
 * `setTimeout` and `clearTimeout`: the host keeps the clock (a timer is a call
 * that resolves when it fires, or is cleared, or the run ends); the callbacks
 * and their arguments stay here. Bounded: a program cannot pile up timers.
 */

import { hostCall, hostSend, jsonStringify, ObjectCtor, reflectApply, then } from './builtins.ts';
import { describeThrown } from './errors.ts';
import { clearTimerRef, failRef, timerRef } from './host.ts';
import { MAX_PENDING_TIMERS } from './wire.ts';

let timerSeq = 0;
const timers = new Map<number, { fn: (...args: unknown[]) => void; args: unknown[] }>();
const timersGet = Map.prototype.get;
const timersSet = Map.prototype.set;
const timersDelete = Map.prototype.delete;
const reportUncaught = (error: unknown): void => {
  hostSend(failRef, [jsonStringify(describeThrown(error))]);
};
const timersSize = (ObjectCtor.getOwnPropertyDescriptor(Map.prototype, 'size') as PropertyDescriptor).get as () => number;
export const setTimeoutImpl = function (fn: unknown, ms?: unknown, ...args: unknown[]): number {
  if (typeof fn !== 'function') throw new TypeError('setTimeout needs a function: strings are not evaluated');
  if ((reflectApply(timersSize, timers, []) as number) >= MAX_PENDING_TIMERS) {
    throw new RangeError(`setTimeout: ${MAX_PENDING_TIMERS} timers are already pending: await or clear some before setting more`);
  }
  const id = ++timerSeq;
  const delay = typeof ms === 'number' && ms > 0 ? ms : 0;
  reflectApply(timersSet, timers, [id, { fn, args }]);
  then(
    hostCall(timerRef, [id, delay]),
    (fired) => {
      const entry = reflectApply(timersGet, timers, [id]) as { fn: (...a: unknown[]) => void; args: unknown[] } | undefined;
      reflectApply(timersDelete, timers, [id]);
      if (fired !== '1' || entry === undefined) return;
      try {
        reflectApply(entry.fn, undefined, entry.args);
      } catch (error) {
        reportUncaught(error);
      }
    },
    () => undefined,
  );
  return id;
};
export const clearTimeoutImpl = function (id: unknown): void {
  if (typeof id !== 'number') return;
  if (reflectApply(timersDelete, timers, [id])) hostSend(clearTimerRef, [id]);
};
