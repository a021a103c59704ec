/**
 * An OpenAPI document's schemas as the registry and the typings take them:
 * local `$ref`s inlined into a fresh tree (a cycle, or a tree past its node
 * budget, ends in "any JSON" and is marked cut), then down-converted to
 * the raw subset where that is exact, so an output can be enforced.
 */
import { downConvertToSubset } from '../schema/down-convert.ts';
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

/** Complete expansions of a document's `$ref`s, by pointer, with their node count: shared by one spec's operations. */
export type InlineCache = Map<string, { node: unknown; size: number }>;

/**
 * A fresh copy of `schema` with every local `$ref` replaced by what it points
 * to. Vendor extensions (`x-…`) and examples are dropped: they say nothing
 * about the shape, and an example may be large. A reference expanded whole
 * once is reused from `cache` (the tree then shares that subtree; it is
 * never mutated).
 */
export function inlineSchema(schema: unknown, document: unknown, cache: InlineCache = new Map(), budget = INLINE_NODE_BUDGET): Inlined {
  const state = { left: budget, cut: false };
  const node = copy(schema, document, new Set(), state, cache);
  return { node: isRecord(node) ? node : {}, cut: state.cut };
}

const DROPPED = new Set(['example', 'examples', 'xml', 'externalDocs', 'discriminator', '$schema', '$id', '$comment']);

interface InlineState {
  left: number;
  cut: boolean;
}

function copy(input: unknown, document: unknown, refs: Set<string>, state: InlineState, cache: InlineCache): unknown {
  if (Array.isArray(input)) return input.map((item) => copy(item, document, refs, state, cache));
  if (!isRecord(input)) return input;
  const ref = input.$ref;
  if (typeof ref === 'string') {
    const description = input.description;
    const annotate = (resolved: unknown) => (typeof description === 'string' && isRecord(resolved) ? { ...resolved, description } : resolved);
    const cached = cache.get(ref);
    if (cached !== undefined && cached.size <= state.left) {
      state.left -= cached.size;
      return annotate(cached.node);
    }
    const target = resolvePointer(document, ref);
    if (target === undefined || refs.has(ref) || state.left <= 0) {
      state.cut = true;
      return { description: refs.has(ref) ? `(recursive: ${refName(ref)})` : `(${refName(ref)}: not expanded)` };
    }
    const wasCut = state.cut;
    const before = state.left;
    state.cut = false;
    refs.add(ref);
    const resolved = copy(target, document, refs, state, cache);
    refs.delete(ref);
    // Only a whole expansion is the same wherever the reference appears.
    if (!state.cut) cache.set(ref, { node: resolved, size: before - state.left });
    state.cut ||= wasCut;
    // Siblings of a $ref (3.1 allows a description beside it) annotate the target.
    return annotate(resolved);
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
        Object.defineProperty(properties, name, { value: copy(child, document, refs, state, cache), enumerable: true, writable: true, configurable: true });
      }
      out[key] = properties;
    } else {
      out[key] = typeof value === 'object' && value !== null ? copy(value, document, refs, state, cache) : value;
    }
  }
  return out;
}

function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1);
}

/** The inlined schema in the raw subset, or undefined when it was cut or has no exact conversion. */
export function toSubset(inlined: Inlined): JsonSchemaNode | undefined {
  return inlined.cut ? undefined : downConvertToSubset(inlined.node);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
