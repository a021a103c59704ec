/**
 * The built-ins the guest relies on, captured at install, before any program
 * runs: a program may replace the globals and prototypes later, and the guest
 * keeps working with these. Also the two ways to reach the host through its
 * References (a call awaited, a message sent).
 */

import { submitRef, type HostRef } from './host.ts';

export const G = globalThis as unknown as Record<string, unknown>;
export const ObjectCtor = Object;
export const freeze = Object.freeze;
export const create = Object.create;
export const setPrototypeOf = Object.setPrototypeOf;
export const defineProperty = Object.defineProperty;
export const getPrototypeOf = Object.getPrototypeOf;
export const objectKeys = Object.keys;
// Not Reflect.ownKeys: V8 caches the key lists of these two, not of ownKeys (several times slower per call).
export const ownNames = Object.getOwnPropertyNames;
export const ownSymbols = Object.getOwnPropertySymbols;
export const reflectApply = Reflect.apply;
export const hasOwn = Object.hasOwn;
export const isArray = Array.isArray;
export const jsonParse = JSON.parse;
export const jsonStringify = JSON.stringify;
export const isFinite = Number.isFinite;
export const StringCtor = String;
export const ErrorCtor = Error;
export const PromiseCtor = Promise;
export const promiseThen = Promise.prototype.then;
export const objectProto = Object.prototype;
export const arrayProto = Array.prototype;
export const arrayPush = Array.prototype.push;
export const objectToString = Object.prototype.toString;
export const captureStackTrace = Error.captureStackTrace;
const refApply = submitRef.apply;
const refApplyIgnored = submitRef.applyIgnored;
export const atomicsStore = Atomics.store;
export const atomicsLoad = Atomics.load;
export const atomicsWait = Atomics.wait;
export const atomicsCompareExchange = Atomics.compareExchange;
export const fromCharCode = String.fromCharCode;
export const Int32ArrayCtor = Int32Array;
export const Uint16ArrayCtor = Uint16Array;
export const now = Date.now;
export const RESOLVED = PromiseCtor.resolve();
export const parseIntCtor = parseInt;
// The built-ins a tool call uses that take `this`, called as f(self, …args): immune to a program's
// later changes of the prototypes, like Reflect.apply, but without its argument array per call
// (every run starts with a cold JIT, and a call makes about twenty of these).
export const uncurryThis = (<A extends unknown[], R>(method: (...args: A) => R): ((self: unknown, ...args: A) => R) =>
  reflectApply(Function.prototype.bind, Function.prototype.call, [method]) as (self: unknown, ...args: A) => R);
export const stringIndexOf = uncurryThis(String.prototype.indexOf as (search: string, from?: number) => number);
export const stringSlice = uncurryThis(String.prototype.slice as (start?: number, end?: number) => string);
export const promiseThenOf = uncurryThis(promiseThen as (onOk?: unknown, onErr?: unknown) => Promise<unknown>);
const refApplyOf = uncurryThis(refApply as (receiver: undefined, args: unknown[], options?: object) => Promise<unknown>);
const refApplyIgnoredOf = uncurryThis(refApplyIgnored as (receiver: undefined, args: unknown[]) => void);

const PROMISE_RESULT = freeze(create(null, { result: { value: freeze(create(null, { promise: { value: true, enumerable: true } })), enumerable: true } })) as object;

export const hostCall = ((ref: HostRef, args: unknown[]): Promise<unknown> => refApplyOf(ref, undefined, args, PROMISE_RESULT));
export const hostSend = ((ref: HostRef, args: unknown[]): void => {
  refApplyIgnoredOf(ref, undefined, args);
});
export const then = (<T>(promise: Promise<T>, onOk: (v: T) => void, onErr: (e: unknown) => void): void => {
  promiseThenOf(promise, onOk, onErr);
});
