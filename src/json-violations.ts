/**
 * The words for each way a value is not lossless JSON: one table for the host's snapshot
 * (src/json.ts) and the sandbox's own checks, which get it as data (sandbox/guest-source.ts), so
 * that the same bad value reads the same on both sides of a tool call. `{}` marks the one detail
 * a message takes.
 */
export const JSON_VIOLATIONS = Object.freeze({
  undefined: 'is undefined, which JSON drops: omit the key or use null',
  bigint: 'is a bigint: use a number or a string',
  function: 'is a function: pass data, not code',
  symbol: 'is a symbol: use a string',
  notFinite: 'is {}, which JSON cannot represent: use null or a finite number',
  negativeZero: 'is -0, which JSON turns into 0: use 0',
  notJson: 'is not JSON',
  cycle: 'is a cycle: it contains itself',
  arraySubclass: 'is an instance of an Array subclass: use a plain array',
  notPlainObject: 'is {}, not a plain object: convert it to plain JSON first',
  sparseArray: 'is a sparse array (index {} is a hole): fill holes, for example with null',
  arrayExtraKey: 'is an array with an extra key {}, which JSON drops: use an object',
  symbolKey: 'has a symbol key {}: use string keys only',
  nonEnumerableKey: 'has a non-enumerable key {}, which JSON drops: make it enumerable or remove it',
  keysChanged: 'has keys that changed while being read',
  unreadable: 'could not be read: a getter or proxy threw while reading it',
  tooDeep: 'is nested deeper than {} levels: flatten it',
});

export type JsonViolationKind = keyof typeof JSON_VIOLATIONS;

/** The message for `kind`, with `detail` in its place. */
export function violationMessage(kind: JsonViolationKind, detail?: string | number): string {
  const text: string = JSON_VIOLATIONS[kind];
  return detail === undefined ? text : text.replace('{}', () => String(detail));
}
