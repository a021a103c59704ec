/**
 * What makes one container lossless JSON, apart from what it holds: its prototype (this realm's or
 * another's plain `Object.prototype` / `Array.prototype`) and its own keys; and the words for why a
 * value is not, thrown as a {@link Violation} for the walker in json.ts to place at a path.
 */
import { inspect, types } from 'node:util';
import { violationMessage } from './json-violations.ts';

/** A value is not lossless JSON, for the reason in `message`; json.ts adds the path. */
export class Violation {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}

const arrayProto = Array.prototype;
/** Prototypes of other realms (node:vm) already recognised as `Object.prototype` / `Array.prototype`. */
const foreignObjectProtos = new WeakSet<object>();
const foreignArrayProtos = new WeakSet<object>();

export function describeNonJson(value: unknown): string {
  switch (typeof value) {
    case 'number':
      return Object.is(value, -0) ? violationMessage('negativeZero') : violationMessage('notFinite', String(value));
    case 'undefined':
      return violationMessage('undefined');
    case 'bigint':
      return violationMessage('bigint');
    case 'function':
      return violationMessage('function');
    case 'symbol':
      return violationMessage('symbol');
    default:
      return violationMessage('notJson');
  }
}

/**
 * Whether `array` is a plain, dense array of `length` elements with no own key but its indices and
 * `length`, as the key list of `Reflect.ownKeys` would tell, for long arrays: `Reflect.ownKeys` of
 * many elements builds a hash set of them, large objects included. Instead,
 * `Object.keys` (a quick path for arrays) counts the elements and enumerable keys, and Node's
 * inspector, which lists an array's other own keys (hidden ones and symbols too, no getter called)
 * without its indices, names the rest cheaply. Only a clean array renders exactly as
 * expected; anything else (a proxy, another prototype, an extra key, an inspector that renders
 * otherwise) answers false, and the caller's full check decides.
 */
export function hasElementsOnly(array: unknown[], length: number): boolean {
  if (types.isProxy(array) || Object.getPrototypeOf(array) !== arrayProto || Object.keys(array).length !== length) return false;
  return inspect(array, ELEMENTS_ONLY) === `[ ... ${length} more items, [length]: ${length} ]`;
}

/** Length from which {@link hasElementsOnly} costs less than a key list (about 70 elements on this machine). */
export const INSPECTED_LENGTH = 256;

/** Every key shown (hidden ones and symbols too), no element, no getter called, on one line, whatever util.inspect.defaultOptions say. */
const ELEMENTS_ONLY = {
  showHidden: true,
  colors: false,
  depth: 0,
  maxArrayLength: 0,
  getters: false,
  customInspect: false,
  showProxy: true,
  breakLength: Infinity,
  compact: 3,
  sorted: false,
  numericSeparator: false,
} as const;

export function checkArrayKeys(src: unknown[], own: (string | symbol)[], length: number): never {
  for (const key of own) {
    if (typeof key === 'symbol') throw new Violation(violationMessage('symbolKey', String(key.description ?? '')));
    if (key === 'length') continue;
    const index = Number(key);
    if (!(Number.isInteger(index) && index >= 0 && index < length && String(index) === key)) {
      throw new Violation(violationMessage('arrayExtraKey', JSON.stringify(key)));
    }
  }
  // Fewer own keys than length + 1 and no stray key: a hole exists below own.length
  // (pigeonhole), so the scan is bounded even when a proxy claims a huge length.
  const bound = Math.min(length, own.length);
  for (let i = 0; i < bound; i++) {
    if (!Object.hasOwn(src, i)) throw new Violation(sparseArray(i));
  }
  throw new Violation(violationMessage('keysChanged'));
}

export function sparseArray(hole: number): string {
  return violationMessage('sparseArray', hole);
}

export function checkObjectKeys(src: object, own: (string | symbol)[]): never {
  for (const key of own) {
    if (typeof key === 'symbol') throw new Violation(violationMessage('symbolKey', String(key.description ?? '')));
    if (!Object.prototype.propertyIsEnumerable.call(src, key)) throw new Violation(violationMessage('nonEnumerableKey', JSON.stringify(key)));
  }
  throw new Violation(violationMessage('keysChanged'));
}

/** A plain object from another realm: its prototype is that realm's `Object.prototype`. */
export function isForeignObjectProto(proto: object): boolean {
  if (foreignObjectProtos.has(proto)) return true;
  if (Object.getPrototypeOf(proto) !== null) return false;
  const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor')?.value as unknown;
  const ok =
    typeof ctor === 'function' &&
    ctor.name === 'Object' &&
    (ctor as { prototype?: unknown }).prototype === proto &&
    Object.prototype.toString.call(proto) === '[object Object]' &&
    Object.hasOwn(proto, 'hasOwnProperty');
  if (ok) foreignObjectProtos.add(proto);
  return ok;
}

export function isForeignArrayProto(proto: object | null): boolean {
  if (proto === null) return false;
  if (foreignArrayProtos.has(proto)) return true;
  const ok = Array.isArray(proto) && isForeignObjectProto(Object.getPrototypeOf(proto) as object);
  if (ok) foreignArrayProtos.add(proto);
  return ok;
}

export function describeInstance(value: object): string {
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  if (tag !== 'Object') return `a ${tag}`;
  const ctor = Object.getPrototypeOf(value)?.constructor as unknown;
  const name = typeof ctor === 'function' && typeof ctor.name === 'string' && ctor.name !== '' ? ctor.name : 'class';
  return `an instance of ${name}`;
}
