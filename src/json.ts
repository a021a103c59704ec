/**
 * Lossless JSON (docs/architecture.md, "Values: lossless JSON"): the only kind of value that crosses a tool
 * boundary. Types here; the one walk that checks, copies and freezes below; the words of its errors in
 * json-violations.ts.
 */
import { inspect, types } from 'node:util';
import { appendIndex, appendKey } from './json-path.ts';
import { violationMessage, type JsonViolationKind } from './json-violations.ts';

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

/** `deepFreeze(snapshotJson(input, root))` in one pass: each copy is frozen as it is finished. Same errors as {@link snapshotJson}. */
export function snapshotFrozenJson(input: unknown, root = 'value'): FrozenJson<JsonValue> {
  return walk(input, root, FREEZE) as FrozenJson<JsonValue>;
}

/**
 * {@link snapshotFrozenJson}, and the value's JSON text, remembered for
 * {@link jsonTextOf}. The text is made before the arrays are frozen: V8
 * stringifies frozen arrays on a slower path. Same errors as {@link snapshotJson}.
 */
export function snapshotFrozenJsonWithText(input: unknown, root = 'value'): FrozenJson<JsonValue> {
  if (typeof input !== 'object' || input === null) return copyFrozen(input, root) as FrozenJson<JsonValue>;
  const arrays: unknown[][] = [];
  const value = copyFrozen(input, root, arrays) as object;
  jsonTexts.set(value, JSON.stringify(value));
  for (let i = 0; i < arrays.length; i++) Object.freeze(arrays[i]);
  return value as FrozenJson<JsonValue>;
}

/**
 * Most elements per chunk of {@link snapshotFrozenJsonInChunks}; arrays of at least two times this
 * many go in chunks.
 */
export const JSON_CHUNK_ELEMENTS = 1_000;
/**
 * Elements of the first chunk: fewer, because the consumer has nothing to parse until it comes
 * (bench/RESULTS.md has the measurement).
 */
export const JSON_FIRST_CHUNK_ELEMENTS = 250;
/**
 * The length of text each later chunk aims at. V8 puts a string of over 128 KiB in its
 * large-object space, a mapping of its own, page-faulted in as it is written and unmapped once
 * collected, which slows the stringify and the sandbox's copy alike (bench/RESULTS.md). This
 * length stays under that size even as two-byte text,
 * with room for slices whose elements are larger than the average so far.
 */
export const JSON_CHUNK_CHARS = 56_000;
/** Fewest elements per later chunk, however large they are: a slice per element would cost more than its size. */
const JSON_CHUNK_MIN_ELEMENTS = 16;

/**
 * What a consumer may take for granted about the containers in a slice's elements, so that it can
 * freeze its own copy without looking into every element: the JSON text of the keys (an array of
 * strings, maybe empty) at which every element of the slice, a plain object, holds a container
 * (array or object) of scalars only, and nowhere else does any element hold a container. An empty
 * list: no element holds a container (each is a scalar, or an array or object of scalars). `''`
 * when the slice is not like that.
 */
export type ChunkShape = string;

/**
 * What {@link snapshotFrozenJsonInChunks} made: the value, how many chunks went (0: none, the whole
 * text is remembered instead), and, when the chunks were a member of the value (an array inside a
 * plain object), the keys down to it and the value's JSON text with `null` in its place.
 */
export interface ChunkedSnapshot {
  value: FrozenJson<JsonValue>;
  chunks: number;
  member?: { path: string[]; frameJson: string };
}

/**
 * {@link snapshotFrozenJson} of a big array (at least two times {@link JSON_CHUNK_ELEMENTS}
 * elements), or of a plain object holding one (the first met in key order, at most
 * {@link MEMBER_DEPTH} objects down), handing `onChunk` the JSON text of each slice of that array (an
 * array of its elements) as soon as its copy is made: a consumer parses one slice while the next is
 * copied. The first slice has {@link JSON_FIRST_CHUNK_ELEMENTS} elements; each later one as many as
 * make about {@link JSON_CHUNK_CHARS} characters of text at the average length so far (at most
 * {@link JSON_CHUNK_ELEMENTS}). Each element and member is read once, as in the one-walk snapshot;
 * the array's own shape (prototype, keys) is checked after its elements. With each text goes the
 * slice's {@link ChunkShape}, learnt during the copy at no second walk. Anything else is taken whole
 * ({@link snapshotFrozenJsonWithText}). Same errors as {@link snapshotJson}; chunks handed out
 * before an error are void.
 */
export function snapshotFrozenJsonInChunks(input: unknown, root: string, onChunk: (json: string, shape: ChunkShape) => void): ChunkedSnapshot {
  const length = chunkableLength(input);
  if (length !== 0) return copyInChunks(input as unknown[], length, root, onChunk, input);
  if (!isPlainObjectCandidate(input)) return { value: snapshotFrozenJsonWithText(input, root), chunks: 0 };
  // As in snapshotFrozenJsonWithText: the texts before the arrays are frozen.
  const arrays: unknown[][] = [];
  let chunks = 0;
  let path: string[] = [];
  const member: MemberInChunks = (array, arrayLength, at, keys) => {
    const chunked = copyInChunks(array, arrayLength, at, onChunk, input);
    ({ chunks } = chunked);
    path = keys;
    return chunked.value;
  };
  try {
    const value = walk(input, root, FREEZE_OBJECTS, arrays, undefined, undefined, member) as FrozenJson<JsonValue>;
    if (chunks > 0) return { value, chunks, member: { path, frameJson: JSON.stringify(frameOf(value, path)) } };
    jsonTexts.set(value as object, JSON.stringify(value));
    return { value, chunks: 0 };
  } catch (error) {
    // A fault met from inside a member (a cycle through the value, say) may have another path from
    // there than from the top: the walk of the whole value names each as snapshotJson does.
    if (error instanceof LossyJsonError) walk(input, root, CHECK);
    throw error;
  } finally {
    for (let i = 0; i < arrays.length; i++) Object.freeze(arrays[i]);
  }
}

/** Shallow copies of the objects down `path` from `value`, with `null` at its end (a spread copy keeps a key named __proto__ its own). */
function frameOf(value: unknown, path: string[]): unknown {
  if (path.length === 0) return null;
  const copy = { ...(value as Record<string, unknown>) };
  copy[path[0]] = frameOf(copy[path[0]], path.slice(1));
  return copy;
}

/** Whether `value` is an object and no array (a revoked proxy is neither: the whole walk names it). */
function isPlainObjectCandidate(value: unknown): value is object {
  try {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** The length of `value` if it is an array to take in chunks (long enough, no hole or extra enumerable key), else 0. */
function chunkableLength(value: unknown): number {
  try {
    // Object.keys of a plain array is quick (V8 lists its indices from the elements, unlike the
    // key list of every kind the full check needs): a hole, an enumerable extra key or a proxy
    // that lists fewer keys than its length ends the copy before it starts.
    if (Array.isArray(value) && value.length >= 2 * JSON_CHUNK_ELEMENTS && Object.keys(value).length === value.length) return value.length;
  } catch {
    // a revoked or throwing proxy: the whole walk says what is wrong with it
  }
  return 0;
}

/** The chunked copy of `input`, an array of `length` elements at `root`, inside `outer` (itself, or the object holding it). */
function copyInChunks(input: unknown[], length: number, root: string, onChunk: (json: string, shape: ChunkShape) => void, outer: unknown): ChunkedSnapshot {
  // Made at their length, not grown by push (see open).
  const copy = new Array<unknown>(length);
  let chunks = 0;
  const learner: ShapeLearner = { keys: [], count: 0, deep: false, taken: false };
  let chars = 0;
  for (let start = 0, end = 0, next = JSON_FIRST_CHUNK_ELEMENTS; start < length; start = end) {
    end = Math.min(length, start + next);
    const arrays: unknown[][] = [];
    const slice = new Array<unknown>(end - start);
    // The containers of the slice's first element, by key, then checked against each other's.
    let shape: string[] | undefined;
    let shaped = true;
    for (let i = start; i < end; i++) {
      let element: unknown;
      try {
        element = input[i];
        if (element === undefined && !Object.hasOwn(input, i)) {
          throw new Violation(sparseArray(i));
        }
      } catch (error) {
        const message = error instanceof Violation ? error.message : UNREADABLE;
        throw new LossyJsonError({ path: error instanceof Violation ? root : appendIndex(root, i), message });
      }
      if (element === input || element === outer) throw new LossyJsonError({ path: appendIndex(root, i), message: 'is a cycle: it contains itself' });
      learner.count = 0;
      learner.deep = false;
      // The element's path is made only for an error: ten thousand strings a value otherwise.
      slice[i - start] = copyFrozen(element, root, arrays, i, shaped ? learner : undefined);
      if (!shaped) continue;
      if (!learner.taken || learner.deep) shaped = false;
      else if (shape === undefined) shape = learner.keys.slice(0, learner.count);
      else shaped = sameKeys(shape, learner);
    }
    // As in snapshotFrozenJsonWithText: the text before the arrays are frozen.
    const text = JSON.stringify(slice);
    onChunk(text, shaped && shape !== undefined ? JSON.stringify(shape) : '');
    chunks++;
    chars += text.length;
    next = Math.min(JSON_CHUNK_ELEMENTS, Math.max(JSON_CHUNK_MIN_ELEMENTS, Math.floor((JSON_CHUNK_CHARS * end) / chars)));
    for (let i = 0; i < arrays.length; i++) Object.freeze(arrays[i]);
    for (let i = 0; i < slice.length; i++) copy[start + i] = slice[i];
  }
  // The array itself as the walk checks it (its prototype, its keys), last: the consumer is idle
  // until the first slice comes.
  try {
    if (checkedArrayLength(input) !== length) throw violation('keysChanged');
  } catch (error) {
    throw new LossyJsonError({ path: root, message: error instanceof Violation ? error.message : UNREADABLE });
  }
  return { value: Object.freeze(copy) as FrozenJson<JsonValue>, chunks };
}

/**
 * What copyFrozen learns of one element of a big array's slice for the slice's ChunkShape, at no
 * second walk: the keys at which the element holds containers (the first `count` of `keys`),
 * whether any container holds another (`deep`), and whether the copy took the element at all
 * (`taken`). One per call of snapshotFrozenJsonInChunks, passed down, so that a getter copying
 * another value meanwhile learns nothing into it.
 */
interface ShapeLearner {
  keys: string[];
  count: number;
  deep: boolean;
  taken: boolean;
}

/** Whether the element `learner` just learnt held containers at the keys `shape` names, in its order. */
function sameKeys(shape: string[], learner: ShapeLearner): boolean {
  if (learner.count !== shape.length) return false;
  for (let i = 0; i < learner.count; i++) if (learner.keys[i] !== shape[i]) return false;
  return true;
}

/**
 * The frozen copy of `input`, arrays left unfrozen in `arrays` when given; `rootIndex`: the input
 * is element `rootIndex` of `root`. `learner` learns the shape of the copy.
 */
function copyFrozen(input: unknown, root: string, arrays?: unknown[][], rootIndex?: number, learner?: ShapeLearner): unknown {
  if (learner !== undefined) learner.taken = true;
  return walk(input, root, arrays === undefined ? FREEZE : FREEZE_OBJECTS, arrays, rootIndex, learner);
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
function hasElementsOnly(array: unknown[], length: number): boolean {
  if (types.isProxy(array) || Object.getPrototypeOf(array) !== arrayProto || Object.keys(array).length !== length) return false;
  return inspect(array, ELEMENTS_ONLY) === `[ ... ${length} more items, [length]: ${length} ]`;
}

/** Length from which {@link hasElementsOnly} costs less than a key list (about 70 elements on this machine). */
const INSPECTED_LENGTH = 256;

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

/** The JSON text of a frozen JSON value: the one made with it, if any, else made now. */
export function jsonTextOf(value: FrozenJson<JsonValue> | JsonValue): string {
  return (typeof value === 'object' && value !== null ? jsonTexts.get(value) : undefined) ?? JSON.stringify(value);
}

/** Texts of values made by {@link snapshotFrozenJsonWithText}: frozen, so a text never goes stale. */
const jsonTexts = new WeakMap<object, string>();

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

// ---------------------------------------------------------------------------
// The walk: one traversal that checks, and copies and freezes as asked.
// ---------------------------------------------------------------------------

const CHECK = 0;
const COPY = 1;
/** Every copy frozen as it is finished. */
const FREEZE = 2;
/** Objects frozen as they are finished; arrays left to the caller, collected in `arrays`. */
const FREEZE_OBJECTS = 3;
type Mode = typeof CHECK | typeof COPY | typeof FREEZE | typeof FREEZE_OBJECTS;

/**
 * Takes a big array met as a member (of the value, or of an object member of it) into its own
 * copy, whose elements it reads instead of the walk; `keys`: the keys down to it.
 */
type MemberInChunks = (array: unknown[], length: number, path: string, keys: string[]) => unknown;
/** Objects down from the value in which a {@link MemberInChunks} is looked for. */
const MEMBER_DEPTH = 2;

/**
 * Levels walked by recursion before the walk goes on from its own stack: a recursive call keeps a
 * container's state in registers, where a frame object per container costs the common shallow
 * value measurable time; the stack keeps any depth from overflowing the call stack.
 */
const RECURSION_LEVELS = 64;
/** Ancestors up to this depth are found by a scan; deeper ones by a Set. */
const SCAN_DEPTH = 32;

/** One walk's state: what it was asked, and where it is. Made per walk, so a walk a getter starts meanwhile has its own. */
interface Walk {
  readonly mode: Mode;
  readonly copy: Copy;
  readonly arrays: unknown[][] | undefined;
  readonly learner: ShapeLearner | undefined;
  member: MemberInChunks | undefined;
  readonly root: string;
  /** The input is element `rootIndex` of `root`: its path is made only for an error. */
  readonly rootIndex: number | undefined;
  /** The containers open, by depth. */
  readonly ancestors: object[];
  /** The key read in each open container, by depth (set on the way down). */
  readonly keys: (string | number)[];
  deep: Set<object> | undefined;
  /** Containers left to walk when the recursion ran out of levels, the next on top. */
  stack: Frame[] | undefined;
  /** Frames of a recursion unwinding to be pushed on `stack`, innermost first. */
  unwound: Frame[] | undefined;
  /** The depth of the container whose walk the walk itself called (not a recursion): where an unwinding ends. */
  chainDepth: number;
  /**
   * What {@link open} made besides the copy it returns: the keys to walk (null for an array, undefined for a copy
   * filled by a spread, walked by for…in) and their count; whether the copy is filled; and the
   * count of own string keys the source has (which a filled copy's keys must match).
   */
  walkKeys: WalkKeys;
  length: number;
  filled: boolean;
  names: number;
}

/** A container's copy (none when only checking). */
type Copied = unknown[] | Record<string, unknown> | undefined;

/** Keys of a container to walk: null for an array, undefined for a spread copy (walked by for…in), else the list. */
type WalkKeys = string[] | null | undefined;

/** A container put aside with where its walk stands. */
interface Frame {
  src: object;
  dst: unknown[] | Record<string, unknown> | undefined;
  keys: WalkKeys;
  length: number;
  index: number;
  filled: boolean;
  names: number;
  depth: number;
}

/** What {@link run} returns when it put its containers on the walk's stack. */
const SUSPENDED: unique symbol = Symbol('suspended');

const objectProto = Object.prototype;
const arrayProto = Array.prototype;
/** Prototypes of other realms (node:vm) already recognised as `Object.prototype` / `Array.prototype`. */
const foreignObjectProtos = new WeakSet<object>();
const foreignArrayProtos = new WeakSet<object>();

/** Why a value that threw while being read is not lossless JSON. */
const UNREADABLE = violationMessage('unreadable');

/**
 * A violation met in the walk. Unplaced when thrown; placed by the innermost walk level that sees it:
 * at its container (`depth` keys down) and, unless it is the container's own, the member `key`.
 */
class Violation {
  readonly message: string;
  placed = false;
  depth = 0;
  key: string | number | undefined;
  constructor(message: string) {
    this.message = message;
  }
  place(depth: number, key: string | number | undefined): this {
    this.placed = true;
    this.depth = depth;
    this.key = key;
    return this;
  }
}

function violation(kind: JsonViolationKind, detail?: string | number): Violation {
  return new Violation(violationMessage(kind, detail));
}

/**
 * The one walk. `rootIndex`: the input is element `rootIndex` of `root` (its path is made only for
 * an error). `learner`: see copyFrozen. `member`: takes the first big array found among the
 * value's members (see snapshotFrozenJsonInChunks) instead of the walk.
 */
function walk(input: unknown, root: string, mode: Mode, arrays?: unknown[][], rootIndex?: number, learner?: ShapeLearner, member?: MemberInChunks): unknown {
  if (typeof input !== 'object' || input === null) {
    if (isJsonScalar(input)) return input;
    throw new LossyJsonError({ path: rootIndex === undefined ? root : appendIndex(root, rootIndex), message: describeNonJson(input) });
  }
  // Copies are filled by a spread and read by for…in, which V8 serves from the copy's own key cache;
  // for…in also visits what a polluted Object.prototype adds, so then the keys are listed instead.
  const copy = mode === CHECK ? NO_COPY : inheritsEnumerableKeys() ? COPY_BY_KEYS : COPY_BY_SPREAD;
  // Made per walk: a walk a getter starts meanwhile has its own.
  const w: Walk = { mode, copy, arrays, learner, member, root, rootIndex, ancestors: [], keys: [], deep: undefined, stack: undefined, unwound: undefined, chainDepth: 0, walkKeys: null, length: 0, filled: false, names: 0 };
  try {
    const top = open(w, input, 0);
    run(w, input, top, w.walkKeys, w.length, -1, w.filled, w.names, 0);
    for (let stack = w.stack; stack !== undefined && stack.length > 0; stack = w.stack) {
      const f = stack.pop() as Frame;
      w.chainDepth = f.depth;
      run(w, f.src, f.dst, f.keys, f.length, f.index, f.filled, f.names, f.depth);
    }
    return top ?? input;
  } catch (error) {
    if (error instanceof LossyJsonError) throw error;
    if (!(error instanceof Violation)) error = new Violation(UNREADABLE);
    const { depth, key, message } = error as Violation;
    const at = pathOf(rootOf(w), w.keys, depth);
    throw new LossyJsonError({ path: key === undefined ? at : typeof key === 'number' ? appendIndex(at, key) : appendKey(at, key), message });
  }
}

/**
 * Walks the members of an open container from `index + 1` (a container member by recursion, or,
 * past {@link RECURSION_LEVELS} from where this recursion began, by the walk's stack), then
 * finishes it. Returns its copy, or {@link SUSPENDED} once it and its open ancestors are on the
 * stack.
 */
function run(w: Walk, src: object, dst: Copied, keys: WalkKeys, length: number, index: number, filled: boolean, names: number, depth: number): unknown {
  let key: string | number | undefined;
  try {
    // One loop per kind of container, so that each loop's property loads see one kind.
    if (keys === null) {
      const array = src as unknown[];
      while (++index < length) {
        key = index;
        const value = array[index];
        if (typeof value === 'object' && value !== null) {
          if (w.learner !== undefined) w.learner.deep = true;
          if (member(w, value, index, depth, dst, false) === SUSPENDED) return suspend(w, src, dst, keys, length, index, filled, names, depth);
        } else if (!isJsonScalar(value)) {
          if (value === undefined && !Object.hasOwn(array, index)) throw new Violation(sparseArray(index)).place(depth, undefined);
          throw new Violation(describeNonJson(value)).place(depth, index);
        } else if (dst !== undefined) {
          (dst as unknown[])[index] = value;
        }
      }
    } else if (keys === undefined) {
      // A spread copy holds the values (read once), and for…in over it is served from its key cache.
      const copy = dst as Record<string, unknown>;
      let count = 0;
      for (const name in copy) {
        count++;
        key = name;
        const value = copy[name];
        if (typeof value === 'object' && value !== null) {
          if (memberOfObject(w, value, name, depth, copy, true) === SUSPENDED) {
            // The rest waits on the stack: by the key list, from this key on.
            const rest = Object.keys(copy);
            if (rest.length !== names) throw objectKeysViolation(src).place(depth, undefined);
            return suspend(w, src, dst, rest, rest.length, count - 1, filled, names, depth);
          }
        } else if (!isJsonScalar(value)) {
          throw new Violation(describeNonJson(value)).place(depth, name);
        }
      }
      key = undefined;
      if (count !== names) throw objectKeysViolation(src);
    } else {
      const from = (filled ? dst : src) as Record<string, unknown>;
      while (++index < length) {
        key = keys[index];
        const value = from[key];
        if (typeof value === 'object' && value !== null) {
          if (memberOfObject(w, value, key, depth, dst, filled) === SUSPENDED) return suspend(w, src, dst, keys, length, index, filled, names, depth);
        } else if (!isJsonScalar(value)) {
          throw new Violation(describeNonJson(value)).place(depth, key);
        } else if (dst !== undefined && !filled) {
          setMember(dst as Record<string, unknown>, key, value, false);
        }
      }
    }
  } catch (error) {
    if (error instanceof LossyJsonError) throw error;
    // A spread copy's keys are counted as they are walked: a key the copy lacks is its object's
    // violation, named before any of its members'.
    if (keys === undefined && Object.keys(dst as object).length !== names) throw objectKeysViolation(src).place(depth, undefined);
    if (error instanceof Violation && error.placed) throw error;
    throw (error instanceof Violation ? error : new Violation(UNREADABLE)).place(depth, key);
  }
  if (w.mode === FREEZE || (w.mode === FREEZE_OBJECTS && keys !== null)) Object.freeze(dst);
  else if (w.mode === FREEZE_OBJECTS) (w.arrays as unknown[][]).push(dst as unknown[]);
  if (depth >= SCAN_DEPTH) w.deep?.delete(src);
  return dst ?? src;
}

/** {@link member} for a member of an object: the learner learns its key, and near the top a big array may go in chunks. */
function memberOfObject(w: Walk, value: object, key: string, depth: number, into: Copied, intoFilled: boolean): unknown {
  const learner = w.learner;
  if (learner !== undefined) {
    if (depth === 0) learner.keys[learner.count++] = key;
    else learner.deep = true;
  }
  return w.member !== undefined && depth < MEMBER_DEPTH ? chunkedMember(w, value, key, depth, into, intoFilled) : member(w, value, key, depth, into, intoFilled);
}

/**
 * Walks `value`, the member at `key` of the container at `depth`, its copy set in the container's
 * copy `into` first; returns SUSPENDED if its walk was put aside.
 */
function member(w: Walk, value: object, key: string | number, depth: number, into: Copied, intoFilled: boolean): unknown {
  if (isAncestor(w, value, depth)) throw violation('cycle');
  w.keys[depth] = key;
  const child = depth + 1;
  const dst = open(w, value, child);
  if (child >= SCAN_DEPTH) (w.deep ??= new Set()).add(value);
  const { walkKeys, length, filled, names } = w;
  if (into !== undefined) {
    if (typeof key === 'number') (into as unknown[])[key] = dst;
    else setMember(into as Record<string, unknown>, key, dst, intoFilled);
  }
  // The recursion goes on up to its levels; past them the child waits on the stack, walked next.
  if (child - w.chainDepth < RECURSION_LEVELS) return run(w, value, dst, walkKeys, length, -1, filled, names, child);
  (w.unwound ??= []).push({ src: value, dst, keys: walkKeys, length, index: -1, filled, names, depth: child });
  return SUSPENDED;
}

/** {@link member} for a member of an object near the top: a big array goes to the walk's MemberInChunks instead, once. */
function chunkedMember(w: Walk, value: object, key: string, depth: number, into: Copied, intoFilled: boolean): unknown {
  for (let d = 0; d <= depth; d++) if (Array.isArray(w.ancestors[d])) return member(w, value, key, depth, into, intoFilled);
  const chunkable = chunkableLength(value);
  if (chunkable === 0) return member(w, value, key, depth, into, intoFilled);
  if (isAncestor(w, value, depth)) throw violation('cycle');
  w.keys[depth] = key;
  const take = w.member as MemberInChunks;
  w.member = undefined;
  const made = take(value as unknown[], chunkable, pathOf(rootOf(w), w.keys, depth + 1), w.keys.slice(0, depth + 1) as string[]);
  setMember(into as Record<string, unknown>, key, made, intoFilled);
  return made;
}

function rootOf(w: Walk): string {
  return w.rootIndex === undefined ? w.root : appendIndex(w.root, w.rootIndex);
}

/** Puts the container aside where its walk stands; the chain's first level moves the unwound frames onto the walk's stack. */
function suspend(
  w: Walk,
  src: object,
  dst: unknown[] | Record<string, unknown> | undefined,
  keys: WalkKeys,
  length: number,
  index: number,
  filled: boolean,
  names: number,
  depth: number,
): typeof SUSPENDED {
  const unwound = (w.unwound ??= []);
  unwound.push({ src, dst, keys, length, index, filled, names, depth });
  if (depth === w.chainDepth) {
    const stack = (w.stack ??= []);
    for (let i = unwound.length - 1; i >= 0; i--) stack.push(unwound[i]);
    unwound.length = 0;
  }
  return SUSPENDED;
}

/** Sets `key` of a copy; a key named `__proto__` stays an own key (a spread copy already has it as one). */
function setMember(dst: Record<string, unknown>, key: string, value: unknown, filled: boolean): void {
  if (key === '__proto__' && !filled) Object.defineProperty(dst, key, { value, writable: true, enumerable: true, configurable: true });
  else dst[key] = value;
}

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

function describeNonJson(value: unknown): string {
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

const NO_COPY = 0;
const COPY_BY_SPREAD = 1;
const COPY_BY_KEYS = 2;
type Copy = typeof NO_COPY | typeof COPY_BY_SPREAD | typeof COPY_BY_KEYS;

/** Whether `Object.prototype` has an enumerable key (which `for…in` would visit on every plain object). */
function inheritsEnumerableKeys(): boolean {
  for (const _key in objectProto) return true;
  return false;
}

/** Checks a container's own shape (prototype, keys) and makes its copy (unless NO_COPY), into `w`'s open fields. */
function open(w: Walk, src: object, depth: number): Copied {
  w.ancestors[depth] = src;
  w.filled = false;
  if (Array.isArray(src)) {
    w.length = checkedArrayLength(src);
    w.walkKeys = null;
    // Made at its length, not grown by push: V8 stringifies the roomy copies of small arrays more slowly.
    return w.copy === NO_COPY ? undefined : new Array<unknown>(w.length);
  }
  const proto = Object.getPrototypeOf(src) as object | null;
  if (proto !== objectProto && proto !== null && !isForeignObjectProto(proto)) throw violation('notPlainObject', describeInstance(src));
  const names = Object.getOwnPropertyNames(src).length;
  // Before any value is read: a getter may delete the symbol key this would name.
  if (Object.getOwnPropertySymbols(src).length !== 0) throw objectKeysViolation(src);
  w.names = names;
  if (w.copy === COPY_BY_SPREAD) {
    let dst: Record<string, unknown> | undefined;
    try {
      dst = { ...src };
    } catch {
      // a getter or proxy threw: copying key by key names the key that did
    }
    if (dst !== undefined) {
      w.walkKeys = undefined;
      w.filled = true;
      return dst;
    }
  }
  const keys = Object.keys(src);
  if (keys.length !== names) throw objectKeysViolation(src);
  w.walkKeys = keys;
  w.length = keys.length;
  return w.copy === NO_COPY ? undefined : {};
}

const NO_KEYS: string[] = [];

/** The length of a plain array whose own keys are its indices and `length`, else throws. */
function checkedArrayLength(src: unknown[]): number {
  const proto = Object.getPrototypeOf(src) as object | null;
  if (proto !== arrayProto && !isForeignArrayProto(proto)) throw violation('arraySubclass');
  const length = src.length;
  // Short arrays: one key list, symbols included (an array has elements, so V8 takes its uncached
  // path for every key list alike, and one Reflect.ownKeys costs less than two).
  if (length < INSPECTED_LENGTH || !hasElementsOnly(src, length)) {
    const own = Reflect.ownKeys(src);
    if (own.length !== length + 1) checkArrayKeys(src, own, length);
  }
  return length;
}

function checkArrayKeys(src: unknown[], own: (string | symbol)[], length: number): never {
  for (const key of own) {
    if (typeof key === 'symbol') throw violation('symbolKey', String(key.description ?? ''));
    if (key === 'length') continue;
    const index = Number(key);
    if (!(Number.isInteger(index) && index >= 0 && index < length && String(index) === key)) throw violation('arrayExtraKey', JSON.stringify(key));
  }
  // Fewer own keys than length + 1 and no stray key: a hole exists below own.length
  // (pigeonhole), so the scan is bounded even when a proxy claims a huge length.
  const bound = Math.min(length, own.length);
  for (let i = 0; i < bound; i++) {
    if (!Object.hasOwn(src, i)) throw new Violation(sparseArray(i));
  }
  throw violation('keysChanged');
}

function sparseArray(hole: number): string {
  return violationMessage('sparseArray', hole);
}

/** What is wrong with the own keys of an object whose key counts are off: a symbol key, a non-enumerable one, or a change. */
function objectKeysViolation(src: object): Violation {
  for (const key of Reflect.ownKeys(src)) {
    if (typeof key === 'symbol') return violation('symbolKey', String(key.description ?? ''));
    if (!Object.prototype.propertyIsEnumerable.call(src, key)) return violation('nonEnumerableKey', JSON.stringify(key));
  }
  return violation('keysChanged');
}

/** A plain object from another realm: its prototype is that realm's `Object.prototype`. */
function isForeignObjectProto(proto: object): boolean {
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

function isForeignArrayProto(proto: object | null): boolean {
  if (proto === null) return false;
  if (foreignArrayProtos.has(proto)) return true;
  const ok = Array.isArray(proto) && isForeignObjectProto(Object.getPrototypeOf(proto) as object);
  if (ok) foreignArrayProtos.add(proto);
  return ok;
}

/** `a Date`, `an instance of Point`: the guest's checks (sandbox/guest/bootstrap.ts) say it alike. */
function describeInstance(value: object): string {
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  if (tag !== 'Object') return `a ${tag}`;
  const ctor = Object.getPrototypeOf(value)?.constructor as unknown;
  const name = typeof ctor === 'function' && typeof ctor.name === 'string' && ctor.name !== '' ? ctor.name : 'class';
  return `an instance of ${name}`;
}

function isAncestor(w: Walk, value: object, depth: number): boolean {
  const ancestors = w.ancestors;
  const end = depth < SCAN_DEPTH ? depth + 1 : SCAN_DEPTH;
  for (let i = 0; i < end; i++) if (ancestors[i] === value) return true;
  return w.deep !== undefined && w.deep.has(value);
}

function pathOf(root: string, keys: (string | number)[], depth: number): string {
  let path = root;
  for (let d = 0; d < depth; d++) {
    const key = keys[d];
    path = typeof key === 'number' ? appendIndex(path, key) : appendKey(path, key);
  }
  return path;
}
