/**
 * An OpenAPI document's schemas as the registry and the typings take them:
 * local `$ref`s inlined into a fresh tree (a cycle, or a tree past its node
 * budget, ends in "any JSON" and is marked cut), and the down-conversion of
 * an inlined schema to the raw subset where that is exact, so an output can
 * be enforced.
 */
import { checkSchemaSubset } from '../schema/subset.ts';
import type { JsonSchemaNode } from '../schema/types.ts';

/** Nodes kept of one inlined schema: beyond the typings' own budget for one schema, more would never be shown. */
export const INLINE_NODE_BUDGET = 1_000;

export interface Inlined {
  node: Record<string, unknown>;
  /** True when a cycle or the budget replaced a part with any JSON: the tree is not the whole schema. */
  cut: boolean;
}

/** Resolves a local JSON pointer (`#/components/schemas/Pet`) in `document`; undefined when it points nowhere. */
export function resolvePointer(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = document;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * A fresh copy of `schema` with every local `$ref` replaced by what it points
 * to. Vendor extensions (`x-…`) and examples are dropped: they say nothing
 * about the shape, and an example may be large.
 */
export function inlineSchema(schema: unknown, document: unknown, budget = INLINE_NODE_BUDGET): Inlined {
  const state = { left: budget, cut: false };
  const node = copy(schema, document, new Set(), state);
  return { node: isRecord(node) ? node : {}, cut: state.cut };
}

const DROPPED = new Set(['example', 'examples', 'xml', 'externalDocs', 'discriminator', '$schema', '$id', '$comment']);

function copy(input: unknown, document: unknown, refs: Set<string>, state: { left: number; cut: boolean }): unknown {
  if (Array.isArray(input)) return input.map((item) => copy(item, document, refs, state));
  if (!isRecord(input)) return input;
  const ref = input.$ref;
  if (typeof ref === 'string') {
    const target = resolvePointer(document, ref);
    if (target === undefined || refs.has(ref) || state.left <= 0) {
      state.cut = true;
      return { description: refs.has(ref) ? `(recursive: ${refName(ref)})` : `(${refName(ref)}: not expanded)` };
    }
    refs.add(ref);
    const resolved = copy(target, document, refs, state);
    refs.delete(ref);
    // Siblings of a $ref (3.1 allows a description beside it) annotate the target.
    const description = input.description;
    return typeof description === 'string' && isRecord(resolved) ? { ...resolved, description } : resolved;
  }
  if (state.left <= 0) {
    state.cut = true;
    return {};
  }
  state.left--;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (key.startsWith('x-') || DROPPED.has(key)) continue;
    if (key === 'properties' && isRecord(value)) {
      const properties: Record<string, unknown> = {};
      for (const [name, child] of Object.entries(value)) {
        Object.defineProperty(properties, name, { value: copy(child, document, refs, state), enumerable: true, writable: true, configurable: true });
      }
      out[key] = properties;
    } else {
      out[key] = typeof value === 'object' && value !== null ? copy(value, document, refs, state) : value;
    }
  }
  return out;
}

function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1);
}

/** Keys that only annotate: dropped by the down-conversion (`format` is an annotation in JSON Schema 2020-12 too). */
const ANNOTATIONS_DROPPED = new Set(['format', 'deprecated', 'readOnly', 'writeOnly', 'title', 'nullable']);
const KEPT_ANNOTATIONS = new Set(['description', 'default']);
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'array', 'object']);

/**
 * The inlined schema in the raw subset, or undefined when no exact
 * conversion exists: `nullable` and `type: [T, "null"]` become a `oneOf`
 * with `null`, a one-branch `anyOf`/`oneOf`/`allOf` becomes its branch, an
 * `anyOf` of branches of distinct single types becomes a `oneOf`, and pure
 * annotations are dropped. Anything else that constrains (`minLength`,
 * `pattern`, schema-valued `additionalProperties`, …) has no exact form.
 */
export function toSubset(inlined: Inlined): JsonSchemaNode | undefined {
  if (inlined.cut) return undefined;
  const converted = convert(inlined.node);
  if (converted === undefined) return undefined;
  return checkSchemaSubset(converted, { root: 'output' }).length === 0 ? (converted as JsonSchemaNode) : undefined;
}

function convert(input: unknown): Record<string, unknown> | undefined {
  if (!isRecord(input)) return undefined;
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

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
