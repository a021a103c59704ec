/**
 * A nested call's value handed to the guest a slice at a time: the guest parses and freezes one
 * slice while the host makes the text of the next, instead of waiting for the whole text. Only a
 * big array goes so, or a plain object holding one (the first met in key order, a few objects
 * down: an MCP tool's result holds its rows at `structuredContent.items`). The value is a frozen
 * snapshot already (the output projection's), so nothing here can meet a getter or a proxy.
 */
import type { JsonValue } from '../../src/json.ts';
import { SLICE_CHARS, SLICE_FIRST_ELEMENTS, SLICE_MAX_ELEMENTS, SLICE_MEMBER_DEPTH, SLICE_MIN_ELEMENTS } from '../tuning.ts';

/** The keys from the value down to the big array (none: the value is the array). */
type Path = string[];

/**
 * Hands `send` the JSON text of each slice of `value`'s big array (an array of its next elements),
 * in order, and returns how the guest makes the value of them: their count, and, when the array is
 * a member, the keys down to it and the value's JSON text with `null` in its place. Undefined,
 * having sent nothing, when the value holds no big array: it then goes whole.
 */
export function sendInSlices(value: JsonValue, send: (json: string) => void): { count: number; path: Path; frameJson: string } | undefined {
  const path = bigArrayPath(value, 0);
  if (path === undefined) return undefined;
  let array = value as unknown;
  for (const key of path) array = (array as Record<string, unknown>)[key];
  const count = sendSlices(array as readonly JsonValue[], send);
  return { count, path, frameJson: path.length === 0 ? '' : JSON.stringify(withNullAt(value as Record<string, JsonValue>, path, 0)) };
}

function isBig(value: unknown): value is readonly JsonValue[] {
  return Array.isArray(value) && value.length >= 2 * SLICE_MAX_ELEMENTS;
}

function bigArrayPath(value: unknown, depth: number): Path | undefined {
  if (isBig(value)) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value) || depth >= SLICE_MEMBER_DEPTH) return undefined;
  for (const [key, member] of Object.entries(value)) {
    if (isBig(member)) return [key];
    const inner = depth + 1 < SLICE_MEMBER_DEPTH ? bigArrayPath(member, depth + 1) : undefined;
    if (inner !== undefined && inner.length > 0) return [key, ...inner];
  }
  return undefined;
}

/** Shallow copies down `path`, `null` at its end (a computed key: `__proto__` stays an own key). */
function withNullAt(value: Record<string, JsonValue>, path: Path, at: number): Record<string, JsonValue | null> {
  const key = path[at];
  return { ...value, [key]: at === path.length - 1 ? null : withNullAt(value[key] as Record<string, JsonValue>, path, at + 1) };
}

/** The first slice is short (the guest has nothing to parse until it comes); later ones aim at a text length. */
function sendSlices(array: readonly JsonValue[], send: (json: string) => void): number {
  let count = 0;
  let chars = 0;
  for (let start = 0, next = SLICE_FIRST_ELEMENTS; start < array.length; ) {
    const end = Math.min(array.length, start + next);
    const text = JSON.stringify(array.slice(start, end));
    send(text);
    count++;
    chars += text.length;
    start = end;
    next = Math.min(SLICE_MAX_ELEMENTS, Math.max(SLICE_MIN_ELEMENTS, Math.floor((SLICE_CHARS * end) / chars)));
  }
  return count;
}
