/**
 * The code that runs INSIDE each isolate. Loaded as source (types stripped,
 * `export` removed) by sandbox/guest-source.ts and evaluated once per isolate,
 * before any program: it captures the built-ins it relies on, installs
 * `console`, `setTimeout`/`clearTimeout`, `ToolCallError`, removes
 * `WebAssembly`, and returns `start`, which installs `tools` and runs one
 * program. The host bindings (isolated-vm References) live only in this
 * closure; every transfer-options object is frozen with a null prototype.
 *
 * Self-contained: no imports, no references to anything outside the function
 * but `JSON_VIOLATIONS`, the host's table of error words, put in scope by the loader.
 *
 * The wire (message kinds, formats, the shared memory's layout) is defined in
 * sandbox/crossing/protocol.ts and handed in at install (`wireJson`). Besides the
 * submit and its replies, the host hands over:
 * - log(level, text), ignored; level `notice` is a runtime note that bypasses the cap;
 * - timer(id, ms) resolves to `1` (fired) or `0` (cleared or run ended); clearTimer(id), ignored;
 * - fail(`<{message,stack}>`), ignored: an uncaught error in a timer callback;
 * and calls start(toolNames, config, program, sharedReplies?), push(replies), chunk(ordinal, json)
 * and reusable() (see GuestApi).
 */

import type { Wire } from '../crossing/protocol.ts';
import type { JSON_VIOLATIONS as JsonViolations, JsonViolationKind } from '../../src/json-violations.ts';

/** The words of src/json-violations.ts, in scope by sandbox/guest-source.ts: not an import, the guest has none. */
declare const JSON_VIOLATIONS: typeof JsonViolations;

interface HostRef {
  apply(receiver: undefined, args: unknown[], options?: object): Promise<unknown>;
  applyIgnored(receiver: undefined, args: unknown[]): void;
}

interface GuestConfig {
  maxLogBytes: number;
  maxResultBytes: number;
  maxArgBytes: number;
  /** Tools whose calls cross asynchronously from the start (the host judged them slow). */
  slowTools?: string[];
  /** Longest wait for the host's answer in a synchronous crossing, ms. */
  syncWaitMs?: number;
  /** Set when the host asks for the program's nondeterministic reads: the values to read first (a replay), in order. */
  reads?: number[];
}

type Program = () => Promise<unknown>;
export type GuestStart = (toolNamesJson: string, configJson: string, program: Program, sharedReplies?: SharedArrayBuffer) => Promise<string>;
/** What the bootstrap hands the host: `start`, and `push`, by which the host delivers replies unasked. */
export interface GuestApi {
  readonly start: GuestStart;
  readonly push: (batch: string) => void;
  /**
   * From the host: the next slice (JSON of an array of elements) of call `ordinal`'s value, whose
   * reply is `C<count>` (the value is the slices joined) or `C<count>\n<keys JSON>\n<object JSON>`
   * (they make the member down those keys, in place of its null).
   */
  readonly chunk: (ordinal: number, json: string) => void;
  /** After the run: '1' when this context can no longer run anything by itself (see isolate reuse). */
  readonly reusable: () => string;
}

export function installGuest(
  submitRef: HostRef,
  logRef: HostRef,
  timerRef: HostRef,
  clearTimerRef: HostRef,
  failRef: HostRef,
  namesJson: string,
  wireJson: string,
): GuestApi {
  'use strict';
  // ---- captured built-ins (a program may replace the globals later) ----
  const G = globalThis as unknown as Record<string, unknown>;
  const ObjectCtor = Object;
  const freeze = Object.freeze;
  const create = Object.create;
  const setPrototypeOf = Object.setPrototypeOf;
  const defineProperty = Object.defineProperty;
  const getPrototypeOf = Object.getPrototypeOf;
  const objectKeys = Object.keys;
  // Not Reflect.ownKeys: V8 caches the key lists of these two, not of ownKeys (several times slower per call).
  const ownNames = Object.getOwnPropertyNames;
  const ownSymbols = Object.getOwnPropertySymbols;
  const reflectApply = Reflect.apply;
  const hasOwn = Object.hasOwn;
  const isArray = Array.isArray;
  const jsonParse = JSON.parse;
  const jsonStringify = JSON.stringify;
  const isFinite = Number.isFinite;
  const StringCtor = String;
  const ErrorCtor = Error;
  const PromiseCtor = Promise;
  const promiseThen = Promise.prototype.then;
  const objectProto = Object.prototype;
  const arrayProto = Array.prototype;
  const arrayPush = Array.prototype.push;
  const objectToString = Object.prototype.toString;
  const captureStackTrace = Error.captureStackTrace;
  const refApply = submitRef.apply;
  const refApplyIgnored = submitRef.applyIgnored;
  const atomicsStore = Atomics.store;
  const atomicsLoad = Atomics.load;
  const atomicsWait = Atomics.wait;
  const atomicsCompareExchange = Atomics.compareExchange;
  const fromCharCode = String.fromCharCode;
  const Int32ArrayCtor = Int32Array;
  const Uint16ArrayCtor = Uint16Array;
  const now = Date.now;
  const RESOLVED = PromiseCtor.resolve();
  const parseIntCtor = parseInt;
  // The built-ins a tool call uses that take `this`, called as f(self, …args): immune to a program's
  // later changes of the prototypes, like Reflect.apply, but without its argument array per call
  // (every run starts with a cold JIT, and a call makes about twenty of these).
  const uncurryThis = (<A extends unknown[], R>(method: (...args: A) => R): ((self: unknown, ...args: A) => R) =>
    reflectApply(Function.prototype.bind, Function.prototype.call, [method]) as (self: unknown, ...args: A) => R);
  const stringIndexOf = uncurryThis(String.prototype.indexOf as (search: string, from?: number) => number);
  const stringSlice = uncurryThis(String.prototype.slice as (start?: number, end?: number) => string);
  const promiseThenOf = uncurryThis(promiseThen as (onOk?: unknown, onErr?: unknown) => Promise<unknown>);
  const refApplyOf = uncurryThis(refApply as (receiver: undefined, args: unknown[], options?: object) => Promise<unknown>);
  const refApplyIgnoredOf = uncurryThis(refApplyIgnored as (receiver: undefined, args: unknown[]) => void);
  const names = jsonParse(namesJson) as { reserved: string[]; removed: string[] };
  const wire = jsonParse(wireJson) as Wire;
  const { value: REPLY_VALUE, sliced: REPLY_SLICED, error: REPLY_ERROR } = wire.reply;
  const { stateWord: STATE_WORD, lengthWord: LENGTH_WORD, waiting: WAITING, abandoned: ABANDONED, headerBytes: SHARED_HEADER_BYTES } = wire.shared;
  const SYNC_PREFIX = wire.syncPrefix;
  const SLOW_ORDINAL = wire.slowOrdinal;
  const RESULT = wire.result;
  const { maxBatch: MAX_BATCH, syncMaxCalls: SYNC_MAX_CALLS, sitesPerTurn: SITES_PER_TURN, maxPendingTimers: MAX_PENDING_TIMERS } = wire.tuning;

  const PROMISE_RESULT = freeze(create(null, { result: { value: freeze(create(null, { promise: { value: true, enumerable: true } })), enumerable: true } })) as object;

  const hostCall = ((ref: HostRef, args: unknown[]): Promise<unknown> => refApplyOf(ref, undefined, args, PROMISE_RESULT));
  const hostSend = ((ref: HostRef, args: unknown[]): void => {
    refApplyIgnoredOf(ref, undefined, args);
  });
  const then = (<T>(promise: Promise<T>, onOk: (v: T) => void, onErr: (e: unknown) => void): void => {
    promiseThenOf(promise, onOk, onErr);
  });

  // ---- per-run state (one run per isolate, ever) ----
  let config: GuestConfig = { maxLogBytes: 0, maxResultBytes: 0, maxArgBytes: 0 };
  let logChars = 0;
  /** Log messages sent (fire-and-forget); start() reports the count so the host can wait for all of them. */
  let logsSent = 0;
  let logsClosed = false;
  let started = false;
  /** The program's own promise has settled: later calls (left running) take the async crossing. */
  let returned = false;
  /** The program made V8 schedule code of its own for later (see the watched built-ins below). */
  let laterWork = false;

  // ---- nondeterministic reads, recorded only when the host asks (a run that may pause) ----
  // Every value Date.now(), new Date(), Date() and Math.random() give the program goes here; the
  // values read since the previous call cross with the next one. A replay's values come first.
  let recordedReads: number[] | undefined;
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
  const readsEntry = ((): string => {
    const reads = recordedReads as number[];
    if (readsSent === reads.length) return '';
    const text = jsonStringify(reflectApply(arraySlice, reads, [readsSent]));
    readsSent = reads.length;
    return `0:${text.length}:${text}`;
  });
  const recordReads = ((replay: number[]): void => {
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
    // A null-prototype handler, as for FinalizationRegistry below.
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

  // ---- ToolCallError ----
  class ToolCallError extends ErrorCtor {
    readonly toolName: string;
    readonly code: string;
    readonly callId: string;
    constructor(toolName: string, code: string, callId: string, message: string) {
      super(message);
      this.toolName = toolName;
      this.code = code;
      this.callId = callId;
    }
  }
  defineProperty(ToolCallError.prototype, 'name', { value: 'ToolCallError', writable: true, configurable: true });
  freeze(ToolCallError.prototype);
  freeze(ToolCallError);

  // ---- lossless JSON: one read per property, a detached copy, then native stringify ----
  // The checks and their order are the host's (src/json.ts), and so are the words: the table
  // JSON_VIOLATIONS is src/json-violations.ts, put in scope by sandbox/guest-source.ts.
  const MAX_DEPTH = 1000;
  class Violation {
    readonly path: string;
    readonly message: string;
    constructor(path: string, message: string) {
      this.path = path;
      this.message = message;
    }
  }
  /** The words for `kind`, with `detail` in place of its `{}`. */
  const violationText = ((kind: JsonViolationKind, detail?: string | number): string => {
    const text = JSON_VIOLATIONS[kind];
    if (detail === undefined) return text;
    const at = stringIndexOf(text, '{}');
    return `${stringSlice(text, 0, at)}${detail}${stringSlice(text, at + 2)}`;
  });
  const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
  const pathOf = (root: string, keys: (string | number)[], depth: number): string => {
    let path = root;
    for (let i = 0; i < depth; i++) {
      const key = keys[i];
      path += typeof key === 'number' ? `[${key}]` : IDENT.test(key) ? `.${key}` : `[${jsonStringify(key)}]`;
    }
    return path;
  };
  const describeScalar = ((value: unknown): string | undefined => {
    switch (typeof value) {
      case 'undefined':
        return violationText('undefined');
      case 'bigint':
        return violationText('bigint');
      case 'function':
        return violationText('function');
      case 'symbol':
        return violationText('symbol');
      case 'number':
        if (!isFinite(value)) return violationText('notFinite', StringCtor(value));
        if (value === 0 && 1 / value < 0) return violationText('negativeZero');
        return undefined;
      default:
        return undefined;
    }
  });
  const ownKeys = Reflect.ownKeys;
  const isInteger = Number.isInteger;
  const NumberCtor = Number;
  const propertyIsEnumerable = uncurryThis(Object.prototype.propertyIsEnumerable as (key: PropertyKey) => boolean);
  const symbolDescription = uncurryThis(ObjectCtor.getOwnPropertyDescriptor(Symbol.prototype, 'description')?.get as () => string | undefined);
  /** Names the stray key or the hole of an array whose key count is off (throws). */
  const arrayKeysViolation = ((value: unknown[], length: number): string => {
    const own = ownKeys(value);
    for (let i = 0; i < own.length; i++) {
      const key = own[i];
      if (typeof key === 'symbol') return violationText('symbolKey', StringCtor(symbolDescription(key) ?? ''));
      if (key === 'length') continue;
      const index = NumberCtor(key);
      if (!(isInteger(index) && index >= 0 && index < length && StringCtor(index) === key)) return violationText('arrayExtraKey', jsonStringify(key));
    }
    // No stray key: a hole exists below own.length (pigeonhole), so the scan is bounded.
    const bound = length < own.length ? length : own.length;
    for (let i = 0; i < bound; i++) if (!hasOwn(value, i)) return violationText('sparseArray', i);
    return violationText('keysChanged');
  });
  const objectKeysViolation = ((value: object): string => {
    const own = ownKeys(value);
    for (let i = 0; i < own.length; i++) {
      const key = own[i];
      if (typeof key === 'symbol') return violationText('symbolKey', StringCtor(symbolDescription(key) ?? ''));
      if (!propertyIsEnumerable(value, key)) return violationText('nonEnumerableKey', jsonStringify(key));
    }
    return violationText('keysChanged');
  });
  /** `a Date`, `an instance of Point`: as the host's describeInstance reads it. */
  const describeInstance = ((value: object): string => {
    const tag = stringSlice(reflectApply(objectToString, value, []) as string, 8, -1);
    if (tag !== 'Object') return `a ${tag}`;
    const ctor = (getPrototypeOf(value) as { constructor?: unknown } | null)?.constructor as { name?: unknown } | undefined;
    const name = typeof ctor === 'function' && typeof ctor.name === 'string' && ctor.name !== '' ? ctor.name : 'class';
    return `an instance of ${name}`;
  });
  /** `parent` and `key`: `input` is `parent[key]`, already read (paths and cycles then count from `parent`). */
  const copyJson = ((input: unknown, root: string, parent?: object, key?: string): unknown => {
    const keys: (string | number)[] = parent === undefined ? [] : [key as string];
    const ancestors: object[] = parent === undefined ? [] : [parent];
    // JSON.stringify asks every array for a toJSON, through Array.prototype: a program that put one
    // there would have its arrays replaced. The copies then get no prototype (objects never have one).
    let bareArrays = true;
    try {
      bareArrays = 'toJSON' in arrayProto;
    } catch {
      // a proxy the program put in the prototype chain threw: take it as there
    }
    /** How deep the read under way is: what throws is named at this depth of `keys`. */
    let at = 0;
    const visit = ((value: unknown, depth: number): unknown => {
      at = depth;
      if (typeof value !== 'object' || value === null) {
        const problem = describeScalar(value);
        if (problem !== undefined) throw new Violation(pathOf(root, keys, depth), problem);
        return value;
      }
      if (depth >= MAX_DEPTH) throw new Violation(pathOf(root, keys, depth), violationText('tooDeep', MAX_DEPTH));
      for (let i = 0; i < depth; i++) {
        if (ancestors[i] === value) throw new Violation(pathOf(root, keys, depth), violationText('cycle'));
      }
      ancestors[depth] = value;
      const proto = getPrototypeOf(value) as object | null;
      if (isArray(value)) {
        if (proto !== arrayProto) throw new Violation(pathOf(root, keys, depth), violationText('arraySubclass'));
        const length = (value as unknown[]).length;
        if (ownNames(value).length !== length + 1 || ownSymbols(value).length !== 0) {
          throw new Violation(pathOf(root, keys, depth), arrayKeysViolation(value as unknown[], length));
        }
        const out: unknown[] = [];
        if (bareArrays) setPrototypeOf(out, null);
        for (let i = 0; i < length; i++) {
          keys[depth] = i;
          at = depth + 1;
          const element = (value as unknown[])[i];
          if (element === undefined && !hasOwn(value, i)) throw new Violation(pathOf(root, keys, depth), violationText('sparseArray', i));
          out[i] = visit(element, depth + 1);
        }
        return out;
      }
      if (proto !== objectProto && proto !== null) throw new Violation(pathOf(root, keys, depth), violationText('notPlainObject', describeInstance(value)));
      const enumerable = objectKeys(value);
      if (ownNames(value).length !== enumerable.length || ownSymbols(value).length !== 0) {
        throw new Violation(pathOf(root, keys, depth), objectKeysViolation(value));
      }
      // Null prototype: no inherited setter (nor `__proto__`) can intercept an assignment.
      const out = create(null) as Record<string, unknown>;
      for (let i = 0; i < enumerable.length; i++) {
        const key = enumerable[i];
        keys[depth] = key;
        at = depth + 1;
        out[key] = visit((value as Record<string, unknown>)[key], depth + 1);
      }
      return out;
    });
    try {
      return visit(input, parent === undefined ? 0 : 1);
    } catch (error) {
      if (error instanceof Violation) throw error;
      throw new Violation(pathOf(root, keys, at), violationText('unreadable'));
    }
  });
  const toJsonText = ((value: unknown, root: string): string => jsonStringify(copyJson(value, root)));
  /**
   * A call's arguments as JSON text: copyJson's checks, each key read once, but the top level
   * written straight to text. Most arguments are a few scalars, and copyJson's null-prototype
   * copy (a dictionary object, slow to fill and to stringify) made up about a fifth of a call's cost.
   */
  const argsJsonText = ((args: object): string => {
    if (getPrototypeOf(args) !== objectProto) return toJsonText(args, 'args');
    const enumerable = objectKeys(args);
    if (ownNames(args).length !== enumerable.length || ownSymbols(args).length !== 0) return toJsonText(args, 'args');
    let text = '{';
    for (let i = 0; i < enumerable.length; i++) {
      const key = enumerable[i];
      let value: unknown;
      try {
        value = (args as Record<string, unknown>)[key];
      } catch {
        throw new Violation(pathOf('args', [key], 1), violationText('unreadable'));
      }
      let part: string;
      if (typeof value === 'string') part = jsonStringify(value);
      else if (typeof value === 'object' && value !== null) part = jsonStringify(copyJson(value, 'args', args, key));
      else {
        const problem = describeScalar(value);
        if (problem !== undefined) throw new Violation(pathOf('args', [key], 1), problem);
        part = StringCtor(value);
      }
      text += `${i === 0 ? '' : ','}${jsonStringify(key)}:${part}`;
    }
    return `${text}}`;
  });

  // Runs once per value a tool returns, in a context whose JIT is cold (each run is a fresh context):
  // the fewer bytecodes per node the better. `for…in` walks V8's enum cache without making a key
  // array per object (Object.keys does: 10,000 rows, 10,000 arrays); the stack is indexed, not pushed.
  // `for…in` also visits inherited enumerable keys: sound only while Object.prototype has none,
  // which a program can change (`Object.prototype.x = …`), so that case takes the Object.keys walk.
  const inheritsNoKeys = ((): boolean => {
    for (const _key in objectProto) return false;
    return true;
  });
  // Named with the prefix V8 is told not to optimize (sandbox/guest-tiering.ts): compiled, its code
  // would serve one context and be thrown away.
  const deepFreeze = (function ptcGuestFreeze(value: unknown): unknown {
    if (typeof value !== 'object' || value === null) return value;
    const plain = inheritsNoKeys();
    // Without a prototype: an index setter a program put on Array.prototype would see each node before it is frozen.
    const stack = setPrototypeOf([value], null) as object[];
    let size = 1;
    while (size > 0) {
      const node = stack[--size] as Record<string, unknown>;
      freeze(node);
      // Arrays by index: Object.keys of an array makes a string per element.
      if (isArray(node)) {
        const items = node as unknown as unknown[];
        for (let i = 0; i < items.length; i++) {
          const child = items[i];
          if (typeof child === 'object' && child !== null) stack[size++] = child;
        }
      } else if (plain) {
        for (const key in node) {
          const child = node[key];
          if (typeof child === 'object' && child !== null) stack[size++] = child;
        }
      } else {
        const keys = objectKeys(node);
        for (let i = 0; i < keys.length; i++) {
          const child = node[keys[i]];
          if (typeof child === 'object' && child !== null) stack[size++] = child;
        }
      }
    }
    return value;
  });

  // ---- console ----
  const formatValue = ((value: unknown, depth: number, seen: object[]): string => {
    switch (typeof value) {
      case 'string':
        return depth === 0 ? value : jsonStringify(value);
      case 'number':
        return value === 0 && 1 / value < 0 ? '-0' : StringCtor(value);
      case 'bigint':
        return `${StringCtor(value)}n`;
      case 'undefined':
        return 'undefined';
      case 'symbol':
        return StringCtor(value);
      case 'function':
        return `[Function ${(value as { name?: string }).name || '(anonymous)'}]`;
      case 'boolean':
        return StringCtor(value);
    }
    if (value === null) return 'null';
    const object = value as object;
    if (value instanceof ErrorCtor) {
      const stack = (value as Error).stack;
      if (typeof stack !== 'string') return `${(value as Error).name}: ${(value as Error).message}`;
      return stack
        .split('\n')
        .filter((line) => !line.includes('ptc-bootstrap.js'))
        .join('\n');
    }
    for (let i = 0; i < seen.length; i++) if (seen[i] === object) return '[Circular]';
    const tag = reflectApply(objectToString, object, []) as string;
    if (tag === '[object Date]') return StringCtor(value);
    if (depth >= 4) return isArray(value) ? '[Array]' : '[Object]';
    seen.push(object);
    try {
      if (isArray(value)) {
        const parts: string[] = [];
        const length = value.length;
        for (let i = 0; i < length && i < 100; i++) parts.push(formatValue(value[i], depth + 1, seen));
        if (length > 100) parts.push(`... ${length - 100} more items`);
        return parts.length === 0 ? '[]' : `[ ${parts.join(', ')} ]`;
      }
      const keys = objectKeys(object);
      const parts: string[] = [];
      for (let i = 0; i < keys.length && i < 100; i++) {
        const key = keys[i];
        parts.push(`${IDENT.test(key) ? key : jsonStringify(key)}: ${formatValue((object as Record<string, unknown>)[key], depth + 1, seen)}`);
      }
      if (keys.length > 100) parts.push(`... ${keys.length - 100} more keys`);
      const prefix = tag === '[object Object]' ? '' : `${tag.slice(8, -1)} `;
      return parts.length === 0 ? `${prefix}{}` : `${prefix}{ ${parts.join(', ')} }`;
    } finally {
      seen.pop();
    }
  });
  const emit = ((level: string, args: unknown[]): void => {
    if (logsClosed) return;
    let line: string;
    try {
      const parts: string[] = [];
      for (let i = 0; i < args.length; i++) parts.push(formatValue(args[i], 0, []));
      line = parts.join(' ');
    } catch {
      line = '[a value that could not be formatted]';
    }
    if (level === 'warn' || level === 'error') line = `[${level}] ${line}`;
    // Host counts exact bytes; this cheaper count (chars <= bytes) only stops a flood early.
    if (line.length > config.maxLogBytes) line = line.slice(0, config.maxLogBytes + 1);
    logChars += line.length;
    if (logChars > config.maxLogBytes) logsClosed = true;
    logsSent++;
    hostSend(logRef, [level, line]);
  });
  const consoleObject = create(null) as Record<string, unknown>;
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    consoleObject[level] = (function (...args: unknown[]): void {
      emit(level, args);
    });
  }
  freeze(consoleObject);

  // ---- timers ----
  let timerSeq = 0;
  const timers = new Map<number, { fn: (...args: unknown[]) => void; args: unknown[] }>();
  const timersGet = Map.prototype.get;
  const timersSet = Map.prototype.set;
  const timersDelete = Map.prototype.delete;
  const reportUncaught = (error: unknown): void => {
    hostSend(failRef, [jsonStringify(describeThrown(error))]);
  };
  const timersSize = (ObjectCtor.getOwnPropertyDescriptor(Map.prototype, 'size') as PropertyDescriptor).get as () => number;
  const setTimeoutImpl = function (fn: unknown, ms?: unknown, ...args: unknown[]): number {
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
  const clearTimeoutImpl = function (id: unknown): void {
    if (typeof id !== 'number') return;
    if (reflectApply(timersDelete, timers, [id])) hostSend(clearTimerRef, [id]);
  };

  // ---- errors crossing out ----
  function describeThrown(error: unknown): { message: string; stack: string; callId?: string } {
    try {
      if (error instanceof ToolCallError) {
        // The callId lets the host name the failed nested call; the host checks it against its own calls.
        const described = { message: `ToolCallError (${error.code}) from tools[${jsonStringify(error.toolName)}]: ${error.message}`, stack: StringCtor(error.stack) };
        return typeof error.callId === 'string' ? { ...described, callId: error.callId } : described;
      }
      if (error instanceof ErrorCtor) {
        const stack = error.stack;
        return { message: `${StringCtor(error.name)}: ${StringCtor(error.message)}`, stack: typeof stack === 'string' ? stack : '' };
      }
      return { message: `Uncaught ${formatValue(error, 1, [])}`, stack: '' };
    } catch {
      return { message: 'Uncaught a value that could not be described', stack: '' };
    }
  }

  // ---- tool stubs and forgotten awaits ----
  interface CallRecord {
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
  // Internal arrays have no prototype: an index setter or a `push` a program put on Array.prototype never sees a record.
  const records = setPrototypeOf([], null) as CallRecord[];
  const ignore = (): void => undefined;
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
  /**
   * Rejects a call's promise. An unawaited call is reported by noteForgotten, not as an unhandled
   * rejection: a handler is attached now, only to a call nobody handles yet (a call that succeeds,
   * or was awaited, costs no extra reaction).
   */
  const rejectCall = (record: CallRecord, promise: Promise<unknown>, reject: (error: unknown) => void, error: unknown): void => {
    if (!record.handled) promiseThenOf(promise, undefined, ignore);
    reject(error);
  };

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
  /** The failing call's own site (the model's line), not the bootstrap's. */
  const failure = (name: string, code: string, callId: string, message: string, site: { stack?: unknown }): ToolCallError => {
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

  // ---- batching: one host crossing per microtask turn; its answer carries the replies ready by then ----
  /** Calls awaiting their reply, by ordinal; no prototype, so no inherited setter sees a store. */
  const waiting = setPrototypeOf([], null) as (CallRecord | undefined)[];
  let waitingCount = 0;
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
  const settleCall = ((record: CallRecord, text: string): void => {
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
  const deliver = ((batch: string): void => {
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
  const chunk = (function chunk(ordinalArg: number, json: string): void {
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

  const buildTools = ((toolNames: string[]): Record<string, unknown> => {
    const tools = create(null) as Record<string, unknown>;
    for (const name of toolNames) {
      defineProperty(tools, name, { value: makeStub(name), enumerable: true });
    }
    return freeze(tools);
  });

  const noteForgotten = ((): void => {
    for (let i = 0; i < records.length; i++) {
      const record = records[i];
      if (record.handled) continue;
      const which = record.ordinal > 0 ? `call #${record.ordinal}, ` : '';
      const state = record.settled ? 'its outcome was dropped' : 'it was still running and is cancelled';
      logsSent++;
      hostSend(logRef, ['notice', `[ptc] warning: tools[${jsonStringify(record.name)}](…) (${which}never awaited): ${state}; await every tool call`]);
    }
  });

  // ---- globals ----
  for (const removed of names.removed) delete G[removed];
  // The two built-ins that make V8 run code later, outside any await of the program: a
  // FinalizationRegistry's callbacks and Atomics.waitAsync's timeouts. An isolate whose program
  // used either is never used again (see `reusable`): the callback could run during a later run.
  const registryCtor = G.FinalizationRegistry as (new (...args: unknown[]) => object) | undefined;
  if (typeof registryCtor === 'function') {
    const reflectConstruct = Reflect.construct;
    // A null-prototype handler: traps a program added to Object.prototype would be asked for too, and handed the target.
    const watched = new Proxy(
      registryCtor,
      create(null, {
        construct: {
          value: (target: new (...args: unknown[]) => object, args: unknown[], newTarget: new (...args: unknown[]) => object): object => {
            laterWork = true;
            return reflectConstruct(target, args, newTarget);
          },
        },
      }) as ProxyHandler<new (...args: unknown[]) => object>,
    );
    // The prototype's `constructor` would hand out the unwatched one.
    defineProperty(registryCtor.prototype, 'constructor', { value: watched, writable: true, enumerable: false, configurable: true });
    defineProperty(G, 'FinalizationRegistry', { value: watched, writable: true, enumerable: false, configurable: true });
  }
  const waitAsync = (Atomics as { waitAsync?: (...args: unknown[]) => unknown }).waitAsync;
  if (typeof waitAsync === 'function') {
    const watchedWait = {
      waitAsync(...args: unknown[]): unknown {
        laterWork = true;
        return reflectApply(waitAsync, undefined, args);
      },
    }.waitAsync;
    defineProperty(Atomics, 'waitAsync', { value: watchedWait, writable: true, enumerable: false, configurable: true });
  }
  const globals: Record<string, unknown> = { ToolCallError, console: consoleObject, setTimeout: setTimeoutImpl, clearTimeout: clearTimeoutImpl };
  for (const name of names.reserved) {
    if (name in globals) defineProperty(G, name, { value: globals[name], writable: false, enumerable: false, configurable: false });
  }
  // isolated-vm settles host replies through the isolate's own `then`, constructor and species:
  // a program that replaced them failed every tool call, or crashed its run (test/security/escapes).
  defineProperty(PromiseCtor, Symbol.species, { value: PromiseCtor, writable: false, enumerable: false, configurable: false });
  defineProperty(PromiseCtor.prototype, 'constructor', { value: PromiseCtor, writable: false, enumerable: false, configurable: false });
  defineProperty(PromiseCtor.prototype, 'then', { value: promiseThen, writable: false, enumerable: false, configurable: false });

  const encodeResult = ((value: unknown): string => {
    if (value === undefined) return RESULT.none;
    let text: string;
    try {
      text = toJsonText(value, 'result');
    } catch (error) {
      const v = error as Violation;
      return `${RESULT.invalid}the returned value is not lossless JSON: ${v.path} ${v.message}`;
    }
    if (text.length > config.maxResultBytes) {
      return `${RESULT.tooLarge}the returned value is ${text.length} characters of JSON, over the ${config.maxResultBytes}-byte limit: return less (summarise, or page through the data)`;
    }
    return `${RESULT.value}${text}`;
  });

  // The functions every run uses are parenthesised: V8 compiles them with the bootstrap, so they
  // come from the code cache (sandbox/isolate-run.ts) instead of compiling lazily in each isolate
  // (`--log-function-events` lists what still does: ToolPromise's members, which a class keeps lazy).

  // Parenthesised: V8 compiles it eagerly, while the isolate waits in the pool.
  const start = (async function start(toolNamesJson: string, configJson: string, program: Program, sharedReplies?: SharedArrayBuffer): Promise<string> {
    if (started) return '0|E{"message":"Error: the isolate was already used","stack":""}';
    started = true;
    config = jsonParse(configJson) as GuestConfig;
    if (config.reads !== undefined) recordReads(config.reads);
    if (sharedReplies !== undefined) {
      sharedBuffer = sharedReplies;
      sharedControl = new Int32ArrayCtor(sharedReplies, 0, SHARED_HEADER_BYTES >> 2);
      const slow = config.slowTools;
      if (slow !== undefined) for (let i = 0; i < slow.length; i++) slowTools[slow[i]] = true;
    }
    defineProperty(G, 'tools', { value: buildTools(jsonParse(toolNamesJson) as string[]), writable: false, enumerable: false, configurable: false });
    let reply: string;
    try {
      const value = await program();
      returned = true;
      noteForgotten();
      reply = encodeResult(value);
    } catch (error) {
      returned = true;
      noteForgotten();
      reply = `${RESULT.thrown}${jsonStringify(describeThrown(error))}`;
    }
    return `${logsSent}|${reply}`;
  });
  // Replies the host pushed while the guest waited for the answer to its submit (big replies of a
  // fan-out, parsed here while the host still works on the rest).
  const push = (function push(batch: string): void {
    deliver(StringCtor(batch));
  });
  // Asked by the host once a run has ended, as a task of its own: the program's microtasks have all
  // run by then. '1': nothing of this context can run again unless the host calls into it, so the
  // isolate may host another run in a fresh context.
  const reusable = (function reusable(): string {
    return returned && !laterWork && waitingCount === 0 ? '1' : '0';
  });
  return freeze(
    create(null, {
      start: { value: start, enumerable: true },
      push: { value: push, enumerable: true },
      chunk: { value: chunk, enumerable: true },
      reusable: { value: reusable, enumerable: true },
    }),
  ) as GuestApi;
}
