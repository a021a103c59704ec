/**
 * Lossless JSON (DESIGN §4): the only kind of value that crosses a tool
 * boundary. Types here; the iterative snapshot, check and freeze below.
 */
export type JsonPrimitive = null | boolean | number | string;
export type JsonArray = JsonValue[];
export type JsonObject = { [key: string]: JsonValue };
export type JsonValue = JsonPrimitive | JsonArray | JsonObject;

/** A deep-frozen JSON value, as tools receive arguments and programs receive values. */
export type FrozenJson<T> = T extends readonly (infer E)[]
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
 * {@link LossyJsonError}. Iterative: deep values do not overflow the stack.
 * `root` names the root in violation paths (default `value`).
 */
export function snapshotJson(input: unknown, root = 'value'): JsonValue {
  void input;
  void root;
  throw new Error('not implemented');
}

/** True when `input` survives a JSON round trip unchanged (see DESIGN §4). Never throws. */
export function isLosslessJson(input: unknown): input is JsonValue {
  void input;
  throw new Error('not implemented');
}

/** Freezes `value` and everything reachable from it, iteratively; returns it. */
export function deepFreeze<T>(value: T): FrozenJson<T> {
  void value;
  throw new Error('not implemented');
}
