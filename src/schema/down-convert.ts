/**
 * Down-conversion of a JSON Schema to the raw subset where the result accepts
 * exactly the same values, so a schema written with OpenAPI's or zod's
 * idioms (`nullable`, `anyOf` with `null`, one-branch `allOf`) can still be
 * enforced by the registry.
 */
import { checkSchemaSubset } from './subset.ts';
import type { JsonSchemaNode } from './types.ts';

/** Keys that only annotate: dropped by the down-conversion (`format` is an annotation in JSON Schema 2020-12 too). */
const ANNOTATIONS_DROPPED = new Set(['format', 'deprecated', 'readOnly', 'writeOnly', 'title', 'nullable', 'example', 'examples', '$schema', '$id', '$comment']);
const KEPT_ANNOTATIONS = new Set(['description', 'default']);
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'array', 'object']);

/**
 * `node` (any JSON Schema without `$ref`) in the raw subset, or undefined
 * when no exact conversion exists: `nullable` and `type: [T, "null"]` become a `oneOf`
 * with `null`, a one-branch `anyOf`/`oneOf`/`allOf` becomes its branch, an
 * `anyOf` of branches of distinct single types becomes a `oneOf`, and pure
 * annotations are dropped. Anything else that constrains (`minLength`,
 * `pattern`, schema-valued `additionalProperties`, …) has no exact form.
 */
export function downConvertToSubset(node: unknown): JsonSchemaNode | undefined {
  const converted = convert(node);
  if (converted === undefined) return undefined;
  return checkSchemaSubset(converted, { root: 'output' }).length === 0 ? (converted as JsonSchemaNode) : undefined;
}

/** Conversions by input node: a spec's operations share expanded subtrees, converted once. */
const converted = new WeakMap<object, Record<string, unknown> | null>();

function convert(input: unknown): Record<string, unknown> | undefined {
  if (!isRecord(input)) return undefined;
  const known = converted.get(input);
  if (known !== undefined) return known ?? undefined;
  const result = convertNode(input);
  converted.set(input, result ?? null);
  return result;
}

function convertNode(input: Record<string, unknown>): Record<string, unknown> | undefined {
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = input[key];
    if (!Array.isArray(branches)) continue;
    const rest = Object.keys(input).filter((k) => k !== key && !ANNOTATIONS_DROPPED.has(k) && !KEPT_ANNOTATIONS.has(k));
    if (rest.length > 0) return undefined;
    const converted = branches.map(convert);
    if (converted.some((branch) => branch === undefined)) return undefined;
    const annotations = keptAnnotations(input);
    if (converted.length === 1) return withNullable({ ...converted[0], ...annotations }, input);
    if (key === 'allOf') return undefined;
    // anyOf and oneOf mean the same when the branches cannot overlap: distinct single types, integer never beside number.
    const types = converted.map((branch) => branch!.type);
    const distinct = types.every((type) => typeof type === 'string') && new Set(types).size === types.length && !(types.includes('integer') && types.includes('number'));
    if (!distinct) return undefined;
    return withNullable({ oneOf: converted, ...annotations }, input);
  }
  const out: Record<string, unknown> = {};
  let type = input.type;
  let nullable = input.nullable === true;
  if (Array.isArray(type)) {
    const nonNull = type.filter((t) => t !== 'null');
    if (nonNull.length !== 1 || type.length > 2) return undefined;
    nullable ||= type.length === 2;
    type = nonNull[0];
  }
  for (const [key, value] of Object.entries(input)) {
    if (ANNOTATIONS_DROPPED.has(key) || key === 'type') continue;
    if (key === 'properties') {
      if (!isRecord(value)) return undefined;
      const properties: Record<string, unknown> = {};
      for (const [name, child] of Object.entries(value)) {
        const converted = convert(child);
        if (converted === undefined) return undefined;
        Object.defineProperty(properties, name, { value: converted, enumerable: true, writable: true, configurable: true });
      }
      out.properties = properties;
    } else if (key === 'items') {
      const converted = convert(value);
      if (converted === undefined) return undefined;
      out.items = converted;
    } else if (key === 'additionalProperties') {
      if (typeof value === 'boolean') out.additionalProperties = value;
      else if (isRecord(value) && Object.keys(value).length === 0) out.additionalProperties = true;
      else return undefined;
    } else if (key === 'required' || key === 'enum' || key === 'const' || KEPT_ANNOTATIONS.has(key)) {
      out[key] = value;
    } else {
      return undefined;
    }
  }
  if (type !== undefined) {
    if (typeof type !== 'string' || !SCALAR_TYPES.has(type)) return undefined;
    out.type = type;
  }
  // An object node written without its type (common in specs) is an object when it lists properties.
  if (out.type === undefined && (out.properties !== undefined || out.required !== undefined)) out.type = 'object';
  if (out.type === undefined && out.items !== undefined) out.type = 'array';
  return nullable ? withNullable(out, { nullable: true }) : out;
}

function withNullable(node: Record<string, unknown>, source: Record<string, unknown>): Record<string, unknown> {
  if (source.nullable !== true || node.type === 'null') return node;
  if (node.type === undefined && node.oneOf === undefined) return node;
  const { description, default: fallback, ...shape } = node;
  const branches = Array.isArray(shape.oneOf) && Object.keys(shape).length === 1 ? (shape.oneOf as unknown[]) : [shape];
  const out: Record<string, unknown> = { oneOf: [...branches, { type: 'null' }] };
  if (description !== undefined) out.description = description;
  if (fallback !== undefined) out.default = fallback;
  return out;
}

function keptAnnotations(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of KEPT_ANNOTATIONS) if (input[key] !== undefined) out[key] = input[key];
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
