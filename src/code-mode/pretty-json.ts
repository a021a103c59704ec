/**
 * `JSON.stringify(value, null, 2)` that stops at a byte budget. A small
 * result nested deeply pretty-prints to far more text than its JSON (every
 * level adds indentation to every line below it), so the text is built piece
 * by piece and building stops at the cap instead of cutting a finished string.
 */
import type { FrozenJsonValue } from '../json.ts';

export interface BoundedText {
  text: string;
  /** True when the budget ran out: `text` is a prefix of the full rendering. */
  truncated: boolean;
}

type Frame =
  | { kind: 'array'; items: readonly FrozenJsonValue[]; next: number; indent: string }
  | { kind: 'object'; entries: [string, FrozenJsonValue][]; next: number; indent: string };

/** The pretty JSON of `value`, or its first `maxBytes` UTF-8 bytes (never splitting a character). */
export function boundedPrettyJson(value: FrozenJsonValue, maxBytes: number): BoundedText {
  const out: string[] = [];
  let bytes = 0;
  let full = false;
  /** Appends a piece; false once the budget is spent (the piece is cut to fit). */
  const emit = (piece: string): boolean => {
    const size = piece.length <= 0x7f ? asciiBytes(piece) : Buffer.byteLength(piece);
    if (bytes + size <= maxBytes) {
      out.push(piece);
      bytes += size;
      return true;
    }
    out.push(cutToBytes(piece, maxBytes - bytes));
    full = true;
    return false;
  };
  const stack: Frame[] = [];
  // Emits a scalar, or opens a container (pushing its frame). Returns false when full.
  const open = (v: FrozenJsonValue, indent: string): boolean => {
    if (v === null || typeof v !== 'object') return emit(scalar(v));
    if (Array.isArray(v)) {
      const items = v as readonly FrozenJsonValue[];
      if (items.length === 0) return emit('[]');
      stack.push({ kind: 'array', items, next: 0, indent });
      return emit('[');
    }
    const entries = Object.entries(v as Record<string, FrozenJsonValue>).filter(([, item]) => item !== undefined);
    if (entries.length === 0) return emit('{}');
    stack.push({ kind: 'object', entries, next: 0, indent });
    return emit('{');
  };
  if (!open(value, '')) return { text: out.join(''), truncated: true };
  while (stack.length > 0 && !full) {
    const frame = stack[stack.length - 1];
    const inner = `${frame.indent}  `;
    const count = frame.kind === 'array' ? frame.items.length : frame.entries.length;
    if (frame.next === count) {
      stack.pop();
      emit(`\n${frame.indent}${frame.kind === 'array' ? ']' : '}'}`);
      continue;
    }
    const i = frame.next++;
    if (!emit(`${i === 0 ? '' : ','}\n${inner}`)) break;
    if (frame.kind === 'array') {
      open(frame.items[i], inner);
    } else {
      const [key, item] = frame.entries[i];
      if (emit(`${JSON.stringify(key)}: `)) open(item, inner);
    }
  }
  return { text: out.join(''), truncated: full };
}

function scalar(v: FrozenJsonValue): string {
  // Values come from JSON.parse: strings, finite numbers, booleans and null.
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

function asciiBytes(piece: string): number {
  // Short pieces are mostly ASCII: a scan is cheaper than Buffer.byteLength.
  for (let i = 0; i < piece.length; i++) if (piece.charCodeAt(i) > 0x7f) return Buffer.byteLength(piece);
  return piece.length;
}

/** The longest prefix of `text` whose UTF-8 form fits in `maxBytes`, never splitting a surrogate pair. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes) return text;
  const cut = Buffer.from(text.slice(0, maxBytes), 'utf8').subarray(0, maxBytes).toString('utf8');
  // A character cut in half decodes to U+FFFD at the end: drop it.
  return cut.endsWith('\uFFFD') && !text.startsWith(cut) ? cut.slice(0, -1) : cut;
}
