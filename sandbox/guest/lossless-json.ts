/**
 * Lossless JSON inside the guest: what leaves it (a call's arguments, the
 * program's result) is read once per property into a detached copy, checked,
 * then written by the native stringify; what comes in (tool values) is frozen.
 * The checks and their order are the host's (src/json.ts), and so are the
 * words: the table JSON_VIOLATIONS is src/json-violations.ts, put in scope by
 * sandbox/guest-source.ts.
 */

import type { JsonViolationKind } from '../../src/json-violations.ts';
import {
  arrayProto,
  create,
  freeze,
  getPrototypeOf,
  hasOwn,
  isArray,
  isFinite,
  jsonStringify,
  ObjectCtor,
  objectKeys,
  objectProto,
  objectToString,
  ownNames,
  ownSymbols,
  reflectApply,
  setPrototypeOf,
  StringCtor,
  stringIndexOf,
  stringSlice,
  uncurryThis,
} from './builtins.ts';
import { JSON_VIOLATIONS } from './host.ts';

const MAX_DEPTH = 1000;
export class Violation {
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
export const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
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
export const toJsonText = ((value: unknown, root: string): string => jsonStringify(copyJson(value, root)));
/**
 * A call's arguments as JSON text: copyJson's checks, each key read once, but the top level
 * written straight to text. Most arguments are a few scalars, and copyJson's null-prototype
 * copy (a dictionary object, slow to fill and to stringify) made up about a fifth of a call's cost.
 */
export const argsJsonText = ((args: object): string => {
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
export const deepFreeze = (function ptcGuestFreeze(value: unknown): unknown {
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
