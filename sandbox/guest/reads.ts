/**
 * The program's nondeterministic reads, recorded only when the host asks (a
 * run that may pause). Every value Date.now(), new Date(), Date() and
 * Math.random() give the program goes here; the values read since the
 * previous call cross with the next one. A replay's values come first.
 */

import { create, defineProperty, G, isArray, jsonStringify, reflectApply, setPrototypeOf } from './builtins.ts';

export let recordedReads: number[] | undefined;
let readsSent = 0;
let replayReads: number[] = [];
let replayAt = 0;
const arraySlice = Array.prototype.slice;
const readValue = ((live: () => number): number => {
  const replayed = replayAt < replayReads.length ? replayReads[replayAt++] : undefined;
  const value = typeof replayed === 'number' ? replayed : live();
  const reads = recordedReads as number[];
  reads[reads.length] = value;
  return value;
});
/** The entry without a name that carries the reads since the previous call (see the host's submit), or ''. */
export const readsEntry = ((): string => {
  const reads = recordedReads as number[];
  if (readsSent === reads.length) return '';
  const text = jsonStringify(reflectApply(arraySlice, reads, [readsSent]));
  readsSent = reads.length;
  return `0:${text.length}:${text}`;
});
export const recordReads = ((replay: number[]): void => {
  recordedReads = setPrototypeOf([], null) as number[];
  replayReads = isArray(replay) ? replay : [];
  const DateCtor = Date;
  const dateNow = DateCtor.now;
  const mathRandom = Math.random;
  const dateToString = DateCtor.prototype.toString;
  const reflectConstruct = Reflect.construct;
  const liveNow = (): number => dateNow();
  const liveRandom = (): number => mathRandom();
  const recordedNow = { now(): number { return readValue(liveNow); } }.now;
  const recordedRandom = { random(): number { return readValue(liveRandom); } }.random;
  defineProperty(DateCtor, 'now', { value: recordedNow, writable: true, enumerable: false, configurable: true });
  // A null-prototype handler, as for FinalizationRegistry (bootstrap.ts).
  const recordedDate = new Proxy(
    DateCtor,
    create(null, {
      construct: {
        value: (target: DateConstructor, args: unknown[], newTarget: new (...a: unknown[]) => object): object =>
          reflectConstruct(target, args.length === 0 ? [readValue(liveNow)] : args, newTarget),
      },
      apply: { value: (): string => reflectApply(dateToString, reflectConstruct(DateCtor, [readValue(liveNow)]), []) as string },
    }) as ProxyHandler<DateConstructor>,
  );
  defineProperty(DateCtor.prototype, 'constructor', { value: recordedDate, writable: true, enumerable: false, configurable: true });
  defineProperty(G, 'Date', { value: recordedDate, writable: true, enumerable: false, configurable: true });
  defineProperty(Math, 'random', { value: recordedRandom, writable: true, enumerable: false, configurable: true });
});
