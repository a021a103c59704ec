/**
 * One wording for validation violations, shared by the ajv engine and the
 * iterative engine so both say exactly the same thing.
 */
import { appendKey } from '../json-path.ts';

export type ViolationRecord =
  | { keyword: 'type'; type: string; actual: unknown }
  | { keyword: 'required'; missing: string }
  | { keyword: 'additionalProperties'; extra: string }
  | { keyword: 'enum'; allowed: readonly unknown[] }
  | { keyword: 'const'; expected: unknown }
  | { keyword: 'oneOf'; branches: number; matched: readonly number[] }
  | { keyword: 'unreadable' };

const MAX_LISTED = 10;
const MAX_PREVIEW = 80;

/** `path: message`; `branch` is the innermost failing oneOf branch the violation came from, if any. */
export function formatViolation(path: string, record: ViolationRecord, branch?: number): string {
  const suffix = branch === undefined ? '' : ` (in oneOf branch ${branch})`;
  switch (record.keyword) {
    case 'type':
      return `${path}: must be ${record.type} (got ${kindOf(record.actual)})${suffix}`;
    case 'required':
      return `${appendKey(path, record.missing)}: is required but missing${suffix}`;
    case 'additionalProperties':
      return `${appendKey(path, record.extra)}: is not allowed (this object accepts no other keys)${suffix}`;
    case 'enum': {
      const listed = record.allowed.slice(0, MAX_LISTED).map(preview).join(', ');
      const more = record.allowed.length > MAX_LISTED ? `, … (${record.allowed.length} in all)` : '';
      return `${path}: must be one of ${listed}${more}${suffix}`;
    }
    case 'const':
      return `${path}: must be exactly ${preview(record.expected)}${suffix}`;
    case 'oneOf': {
      const { branches, matched } = record;
      const found =
        matched.length === 0 ? 'matches none' : `matches ${matched.length} (branches ${matched.join(', ')})`;
      return `${path}: must match exactly one of its ${branches} oneOf branches, but ${found}${suffix}`;
    }
    case 'unreadable':
      return `${path}: could not be read (a getter or proxy threw); pass plain JSON`;
  }
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isFinite(value) ? (Number.isInteger(value) ? 'integer' : 'number') : String(value);
  return typeof value;
}

function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = '(unprintable)';
  }
  return text.length > MAX_PREVIEW ? `${text.slice(0, MAX_PREVIEW - 1)}…` : text;
}
