/**
 * Shared vocabulary of the schema subset: the types, the
 * annotations and the checks that the DSL compiler and the raw-subset checker
 * both apply.
 */
import { isLosslessJson } from '../json.ts';

export type SubsetType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';

export const SUBSET_TYPES: ReadonlySet<string> = new Set<SubsetType>([
  'string',
  'number',
  'integer',
  'boolean',
  'null',
  'array',
  'object',
]);

export const ANNOTATION_KEYS: ReadonlySet<string> = new Set(['description', 'title', 'default', 'examples']);

/** Root-only keys MCP servers emit; accepted as annotations and dropped on normalisation. */
export const ROOT_DECORATION_KEYS: ReadonlySet<string> = new Set(['$schema', '$id', '$comment']);

export const SUPPORTED_KEYWORDS_HINT =
  'the subset is type, oneOf, properties, required, additionalProperties, items, enum, const, description, title, default and examples';

export function describeKey(key: string): string {
  return `\`${key}\``;
}

/** Is `value` a plain object (own prototype is `Object.prototype`, null or another realm's)? Never throws. */
export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  try {
    if (Array.isArray(value)) return false;
    const proto = Object.getPrototypeOf(value) as object | null;
    return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null;
  } catch {
    return false;
  }
}

/** Does the JSON `value` have JSON Schema type `type`? */
export function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}

/**
 * Checks one annotation (`description`, `title`, `default`, `examples`) and
 * returns its violation, or undefined.
 */
export function checkAnnotation(key: string, value: unknown): string | undefined {
  switch (key) {
    case 'description':
    case 'title':
      return typeof value === 'string' ? undefined : `${describeKey(key)} must be a string`;
    case 'default':
      return isLosslessJson(value) ? undefined : '`default` must be lossless JSON (no undefined, NaN, -0, functions, class instances …)';
    case 'examples':
      return Array.isArray(value) && isLosslessJson(value)
        ? undefined
        : '`examples` must be an array of lossless JSON values';
    default:
      return undefined;
  }
}

/**
 * Checks `enum` / `const` against the node's `type` (when there is one) and
 * JSON-ness. Returns violations (without path).
 */
export function checkLiterals(node: Record<string, unknown>, type: string | undefined, typeName: string): string[] {
  const out: string[] = [];
  if ('enum' in node) {
    const values = node.enum;
    if (!Array.isArray(values) || values.length === 0) {
      out.push('`enum` must be a non-empty array of allowed values');
    } else if (!isLosslessJson(values)) {
      out.push('`enum` values must be lossless JSON');
    } else if (type !== undefined) {
      values.forEach((value, i) => {
        if (!matchesType(value, type)) out.push(`\`enum[${i}]\` is ${JSON.stringify(value)}, which is not of type ${typeName}`);
      });
    }
  }
  if ('const' in node) {
    const value = node.const;
    if (!isLosslessJson(value)) out.push('`const` must be lossless JSON');
    else if (type !== undefined && !matchesType(value, type)) {
      out.push(`\`const\` is ${JSON.stringify(value)}, which is not of type ${typeName}`);
    }
  }
  return out;
}
