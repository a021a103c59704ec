/**
 * Lossless JSON (docs/architecture.md, "Values: lossless JSON"): the only kind of value that crosses a tool
 * boundary. Types here; the iterative snapshot, check and freeze below.
 */
import { appendIndex, appendKey } from './json-path.ts';
import {
  checkArrayKeys,
  checkObjectKeys,
  describeInstance,
  describeNonJson,
  hasElementsOnly,
  INSPECTED_LENGTH,
  isForeignArrayProto,
  isForeignObjectProto,
  sparseArray,
  Violation,
} from './json-shape.ts';
import { violationMessage } from './json-violations.ts';

export type JsonPrimitive = null | boolean | number | string;
export type JsonArray = JsonValue[];
export type JsonObject = { [key: string]: JsonValue };
export type JsonValue = JsonPrimitive | JsonArray | JsonObject;

/** Any deep-frozen JSON value. */
export type FrozenJsonValue = JsonPrimitive | readonly FrozenJsonValue[] | { readonly [key: string]: FrozenJsonValue };

/**
 * A deep-frozen JSON value, as tools receive arguments and programs receive
 * values. `JsonValue` (and wider) maps to the named {@link FrozenJsonValue}
 * instead of being expanded, which keeps inference of open schemas shallow.
 */
export type FrozenJson<T> = JsonValue extends T
  ? FrozenJsonValue
  : T extends readonly (infer E)[]
    ? ReadonlyArray<FrozenJson<E>>
    : T extends object
      ? { readonly [K in keyof T]: FrozenJson<T[K]> }
      : T;

/** Where and why a value is not lossless JSON. `path` is like `value.a[2].b`. */
export interface JsonViolation {
  path: string;
  message: string;
}

/** Thrown by {@link snapshotJson} when the input is not lossless JSON. */
export class LossyJsonError extends Error {
  override name = 'LossyJsonError';
  readonly violation: JsonViolation;
  constructor(violation: JsonViolation) {
    super(`${violation.path}: ${violation.message}`);
    this.violation = violation;
  }
}

/**
 * Returns a detached copy of `input` if it is lossless JSON, else throws
 * {@link LossyJsonError} naming the first offending path. Iterative: deep
 * values do not overflow the stack. `root` names the root in violation paths
 * (default `value`). Getters are read once; a getter or proxy trap that
 * throws becomes a `LossyJsonError`. `toJSON` is not consulted. A shared
 * (non-cyclic) reference is copied at each place it occurs, as a JSON round
 * trip would.
 */
export function snapshotJson(input: unknown, root = 'value'): JsonValue {
  return walk(input, root, COPY) as JsonValue;
}

/**
 * `deepFreeze(snapshotJson(input, root))` in one pass (cheaper: each copy is
 * frozen as it is finished, no second traversal). Same errors as
 * {@link snapshotJson}. A plain value no deeper than 64 levels (the common
 * case) is copied by a quicker recursion; anything else is read again by the
 * walker, so a getter in such a value may be read twice (the copy still comes
 * from one reading).
 */
export function snapshotFrozenJson(input: unknown, root = 'value'): FrozenJson<JsonValue> {
  return copyFrozen(input, root) as FrozenJson<JsonValue>;
}

/** True when `input` survives a JSON round trip unchanged. Never throws. */
export function isLosslessJson(input: unknown): input is JsonValue {
  try {
    walk(input, 'value', CHECK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Freezes `value` and everything reachable from it through own enumerable
 * properties, iteratively; returns it. Meant for JSON values such as
 * snapshots; cycles and shared references are handled. An object that is
 * already frozen is taken as deep-frozen and not entered (snapshots are fresh,
 * so this never skips anything there).
 */
export function deepFreeze<T>(value: T): FrozenJson<T> {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value as FrozenJson<T>;
  // Each object is frozen before its children are pushed, so a frozen object is
  // either done or on the stack: cycles and shared references end here.
  Object.freeze(value);
  const stack: object[] = [value];
  while (stack.length > 0) {
    const node = stack.pop() as Record<string, unknown>;
    const keys = Array.isArray(node) ? null : Object.keys(node);
    const length = keys === null ? (node as unknown as unknown[]).length : keys.length;
    for (let i = 0; i < length; i++) {
      const child = node[keys === null ? i : keys[i]];
      if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) {
        Object.freeze(child);
        stack.push(child);
      }
    }
  }
  return value as FrozenJson<T>;
}

// ---- The frozen copy: plain, shallow values by recursion, anything else by the walker. ----

/** What {@link copyPlain} returns when it leaves a value to the walker. */
const LEFT = Symbol('left to the walker');
/** Nesting past which {@link copyPlain} leaves a value to the walker (which has no depth limit). */
const PLAIN_DEPTH = 64;
/**
 * The objects {@link copyPlain} is inside from depth {@link PLAIN_CYCLE_DEPTH} on, by depth: a
 * value among them is a cycle, left to the walker (which names it) within one round of it past
 * that depth, not after rounds of it down to {@link PLAIN_DEPTH}, each perhaps as wide as a whole
 * big value. Shallower objects are not remembered: most values are no deeper, and remembering
 * every object costs a big value measurable time (bench/RESULTS.md).
 */
const plainAncestors: object[] = [];
const PLAIN_CYCLE_DEPTH = 4;

/**
 * The frozen copy of `input`, as the walker makes it in mode COPY_AND_FREEZE. Plain values no deeper than
 * {@link PLAIN_DEPTH} are copied by {@link copyPlain}; anything else, and any value that is not
 * lossless JSON, is left to the walker, which reads it again from the start (so a getter of such a
 * value may be read twice; the copy comes from one reading) and names what is wrong.
 */
function copyFrozen(input: unknown, root: string): unknown {
  if (typeof input === 'object' && input !== null && !inheritsEnumerableKeys()) {
    try {
      const copy = copyPlain(input, 0);
      if (copy !== LEFT) return copy;
    } catch {
      // a getter or proxy threw: the walker says where
    } finally {
      // Holds nothing once done (a getter that snapshots another value only costs this one its cycle check).
      if (plainAncestors.length !== 0) plainAncestors.length = 0;
    }
  } else if (isJsonScalar(input)) {
    return input;
  }
  return walk(input, root, COPY_AND_FREEZE);
}

/**
 * The walker's checks and copy for the common case, by recursion: no frame per container, no
 * path kept. Returns {@link LEFT} at the first thing it does not take (a violation, another
 * realm's prototype, a polluted `Object.prototype`, a cycle, nesting past {@link PLAIN_DEPTH}).
 * The copy is the spread's, so a key named `__proto__` is already its own property there, and
 * assigning its copied value does not reach the prototype.
 */
function copyPlain(src: object, depth: number): unknown {
  if (depth >= PLAIN_CYCLE_DEPTH) plainAncestors[depth] = src;
  if (Array.isArray(src)) {
    if (Object.getPrototypeOf(src) !== arrayProto) return LEFT;
    const length = src.length;
    if (length < INSPECTED_LENGTH ? Reflect.ownKeys(src).length !== length + 1 : !hasElementsOnly(src, length)) return LEFT;
    // At its length: a push onto [] reserves spare room, and V8 stringifies the roomy copies of small
    // arrays more slowly.
    const copy = new Array<unknown>(length);
    for (let i = 0; i < length; i++) {
      const value: unknown = src[i];
      if (typeof value === 'object' && value !== null) {
        const child = depth < PLAIN_DEPTH && (depth < PLAIN_CYCLE_DEPTH || !isPlainAncestor(value, depth)) ? copyPlain(value, depth + 1) : LEFT;
        if (child === LEFT) return LEFT;
        copy[i] = child;
      } else if (isJsonScalar(value)) {
        copy[i] = value;
      } else {
        return LEFT;
      }
    }
    return Object.freeze(copy);
  }
  const proto = Object.getPrototypeOf(src) as object | null;
  if (proto !== objectProto && proto !== null) return LEFT;
  if (Object.getOwnPropertySymbols(src).length !== 0) return LEFT;
  const names = Object.getOwnPropertyNames(src).length;
  const copy = { ...src } as Record<string, unknown>;
  // The copy's own keys are what for…in visits (copyFrozen saw Object.prototype add none), and each
  // value is checked here: no key list of the source is needed beyond its count, which must be the
  // copy's (a non-enumerable key, or a proxy listing other keys to the spread, ends the quick copy).
  let count = 0;
  for (const key in copy) {
    count++;
    const value = copy[key];
    if (typeof value === 'object' && value !== null) {
      const child = depth < PLAIN_DEPTH && (depth < PLAIN_CYCLE_DEPTH || !isPlainAncestor(value, depth)) ? copyPlain(value, depth + 1) : LEFT;
      if (child === LEFT) return LEFT;
      copy[key] = child;
    } else if (!isJsonScalar(value)) {
      return LEFT;
    }
  }
  if (count !== names) return LEFT;
  return Object.freeze(copy);
}

/** Whether `Object.prototype` has an enumerable key (which `for…in` would visit on every plain object). */
function inheritsEnumerableKeys(): boolean {
  for (const _key in objectProto) return true;
  return false;
}

function isPlainAncestor(value: object, depth: number): boolean {
  for (let d = PLAIN_CYCLE_DEPTH; d <= depth; d++) if (plainAncestors[d] === value) return true;
  return false;
}

// ---- The walker: one explicit-stack traversal that checks and optionally copies. ----

interface Frame {
  src: object;
  dst: JsonValue[] | JsonObject | undefined;
  /** Object keys; null for arrays. */
  keys: string[] | null;
  length: number;
  /** Index of the element being read (the one a violation names). */
  index: number;
  /** `dst` already holds the values, copied by a spread: one native copy, not a store per key. */
  filled: boolean;
}

const CHECK = 0;
const COPY = 1;
const COPY_AND_FREEZE = 2;
type Mode = typeof CHECK | typeof COPY | typeof COPY_AND_FREEZE;

/** Ancestors up to this depth are found by scanning the frame stack; deeper ones by a Set. */
const SCAN_DEPTH = 32;

// The hot checks stay in this module, where the copies can inline them.
const objectProto = Object.prototype;
const arrayProto = Array.prototype;

function isJsonScalar(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && (value !== 0 || 1 / value > 0);
    default:
      return value === null;
  }
}

/** Why a value that threw while being read is not lossless JSON. */
const UNREADABLE = violationMessage('unreadable');

function walk(input: unknown, root: string, mode: Mode): unknown {
  const copy = mode !== CHECK;
  const stack: Frame[] = [];
  let deep: Set<object> | undefined;
  try {
    if (typeof input !== 'object' || input === null) {
      if (isJsonScalar(input)) return input;
      throw new Violation(describeNonJson(input));
    }
    const first = enter(input as object, copy);
    stack.push(first);
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      const { src, keys } = frame;
      let descended = false;
      while (++frame.index < frame.length) {
        const key = keys === null ? frame.index : keys[frame.index];
        // A filled copy already holds the values (read once, by the spread in enter).
        const value: unknown = (frame.filled ? (frame.dst as Record<string, unknown>) : (src as Record<string | number, unknown>))[key];
        let out: unknown;
        if (typeof value === 'object' && value !== null) {
          if (isAncestor(value, stack, deep)) throw new Violation(violationMessage('cycle'));
          const child = enter(value, copy);
          out = child.dst;
          if (copy) {
            if (keys === null) (frame.dst as unknown[]).push(out);
            else assign(frame.dst as JsonObject, key as string, out);
          }
          if (stack.length >= SCAN_DEPTH) (deep ??= new Set()).add(value);
          stack.push(child);
          descended = true;
          break;
        }
        if (!isJsonScalar(value)) {
          if (value === undefined && keys === null && !Object.hasOwn(src, key)) {
            // Named at the array, as the key check names a hole.
            frame.index = -1;
            throw new Violation(sparseArray(key as number));
          }
          throw new Violation(describeNonJson(value));
        }
        if (copy && !frame.filled) {
          if (keys === null) (frame.dst as unknown[]).push(value);
          else assign(frame.dst as JsonObject, key as string, value);
        }
      }
      if (!descended) {
        stack.pop();
        if (mode === COPY_AND_FREEZE) Object.freeze(frame.dst);
        if (deep !== undefined && stack.length >= SCAN_DEPTH) deep.delete(frame.src);
      }
    }
    return first.dst ?? input;
  } catch (error) {
    if (error instanceof LossyJsonError) throw error;
    const message = error instanceof Violation ? error.message : UNREADABLE;
    throw new LossyJsonError({ path: pathOf(root, stack), message });
  }
}

/** Checks a container's own shape and opens a frame for it. */
function enter(src: object, copy: boolean): Frame {
  if (Array.isArray(src)) {
    const proto = Object.getPrototypeOf(src) as object | null;
    if (proto !== arrayProto && !isForeignArrayProto(proto)) {
      throw new Violation(violationMessage('arraySubclass'));
    }
    const length = src.length;
    // A long array by its rendering; else one key list, symbols included: an array has elements,
    // so V8 takes its uncached path for getOwnPropertyNames and Reflect.ownKeys alike, and one
    // Reflect.ownKeys costs less than getOwnPropertyNames + getOwnPropertySymbols. For plain
    // objects the opposite holds (getOwnPropertyNames is served from the enum cache).
    if (length < INSPECTED_LENGTH || !hasElementsOnly(src, length)) {
      const own = Reflect.ownKeys(src);
      if (own.length !== length + 1) checkArrayKeys(src, own, length);
    }
    return { src, dst: copy ? [] : undefined, keys: null, length, index: -1, filled: false };
  }
  const proto = Object.getPrototypeOf(src) as object | null;
  if (proto !== objectProto && proto !== null && !isForeignObjectProto(proto)) {
    throw new Violation(violationMessage('notPlainObject', describeInstance(src)));
  }
  const keys = Object.keys(src);
  if (Object.getOwnPropertyNames(src).length !== keys.length || Object.getOwnPropertySymbols(src).length !== 0) {
    checkObjectKeys(src, Reflect.ownKeys(src));
  }
  if (!copy) return { src, dst: undefined, keys, length: keys.length, index: -1, filled: false };
  let dst: JsonObject;
  try {
    dst = { ...src } as JsonObject;
  } catch {
    // A getter or proxy threw: copying key by key names the key that did.
    return { src, dst: {}, keys, length: keys.length, index: -1, filled: false };
  }
  // A proxy can list other keys to the spread than to the checks above: a key only the copy has
  // would carry a value no check saw (a function, say) into the snapshot.
  if (enumerableKeyCount(dst) !== keys.length && Object.keys(dst).length !== keys.length) {
    throw new Violation(violationMessage('keysChanged'));
  }
  return { src, dst, keys, length: keys.length, index: -1, filled: true };
}

/** Keys `for…in` visits: the own ones, and any a polluted `Object.prototype` adds (then the caller asks `Object.keys`). No key array is made. */
function enumerableKeyCount(object: object): number {
  let count = 0;
  for (const _key in object) count++;
  return count;
}

function isAncestor(value: object, stack: Frame[], deep: Set<object> | undefined): boolean {
  const end = stack.length < SCAN_DEPTH ? stack.length : SCAN_DEPTH;
  for (let i = 0; i < end; i++) if (stack[i].src === value) return true;
  return deep !== undefined && deep.has(value);
}

function assign(dst: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(dst, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    (dst as Record<string, unknown>)[key] = value;
  }
}

function pathOf(root: string, stack: Frame[]): string {
  let path = root;
  for (const frame of stack) {
    if (frame.index < 0 || frame.index >= frame.length) break;
    path = frame.keys === null ? appendIndex(path, frame.index) : appendKey(path, frame.keys[frame.index]);
  }
  return path;
}
