/**
 * Untrusted tool schemas → a small, bounded schema tree that
 * json-schema-to-typescript can compile without surprises: only the keywords
 * we render survive, `$ref` never does, every node the generator cannot or
 * should not render becomes `JsonValue`. Never throws.
 */
import { cleanDescription, type TextLimits } from './text.ts';

/** Alias names declared in the typings header; the only `tsType` values we emit. */
export type AliasType = 'JsonValue' | 'JsonObject' | 'UnvalidatedJson' | 'McpContentBlock[]' | 'Record<string, never>';

/** What we hand to `compile`: fresh objects, own keys only, no `$ref`, bounded. */
export interface SafeNode {
  type?: 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';
  tsType?: AliasType;
  description?: string;
  oneOf?: SafeNode[];
  allOf?: SafeNode[];
  enum?: (string | number | boolean | null)[];
  items?: SafeNode;
  properties?: Record<string, SafeNode>;
  required?: string[];
  additionalProperties?: false;
}

export interface SchemaLimits extends TextLimits {
  /** Nesting depth kept; deeper nodes become `JsonValue`. Default 64. */
  maxDepth: number;
  /**
   * Nodes kept per schema; past it the rest degrades (further properties are
   * dropped and their object left open to any extra JSON key). Default 1,000.
   */
  maxNodes: number;
  /** Nodes kept over all the schemas of one tool set; past it the same degradation applies. Default 10,000. */
  maxTotalNodes: number;
  /** `enum` members and `oneOf` branches kept; a longer list degrades the node. Default 256. */
  maxMembers: number;
  /** Characters of a string literal (`enum`/`const`); a longer one degrades the node. Default 256. */
  maxLiteralLength: number;
}

export const DEFAULT_SCHEMA_LIMITS: SchemaLimits = {
  maxDepth: 64,
  maxNodes: 1_000,
  maxTotalNodes: 10_000,
  maxMembers: 256,
  maxLiteralLength: 256,
  maxDescriptionLength: 2_000,
};

const SCALARS = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const TYPES = new Set([...SCALARS, 'array', 'object']);

type Literal = string | number | boolean | null;

/** Nodes left to spend over a whole tool set (see `sanitizeSchema`). */
export interface SharedBudget {
  total: number;
}

export function totalBudget(limits: SchemaLimits): SharedBudget {
  return { total: limits.maxTotalNodes };
}

/** Nodes left to spend in this schema, and in the tool set. */
interface Budget {
  nodes: number;
  shared: SharedBudget;
}

/**
 * A fresh, bounded copy of `input` (a JSON Schema node of any provenance).
 * `shared` is spent across calls: pass one `totalBudget` to every schema of a tool set.
 */
export function sanitizeSchema(
  input: unknown,
  limits: SchemaLimits = DEFAULT_SCHEMA_LIMITS,
  shared: SharedBudget = totalBudget(limits),
): SafeNode {
  return node(input, 0, limits, { nodes: limits.maxNodes, shared });
}

function exhausted(budget: Budget): boolean {
  return budget.nodes <= 0 || budget.shared.total <= 0;
}

function node(input: unknown, depth: number, limits: SchemaLimits, budget: Budget): SafeNode {
  if (depth > limits.maxDepth || exhausted(budget)) return { tsType: 'JsonValue' };
  budget.nodes--;
  budget.shared.total--;
  try {
    if (!isRecord(input)) return { tsType: 'JsonValue' };
    const description = describe(input, limits);
    const shape = shapeOf(input, depth, limits, budget);
    return description === undefined ? shape : { ...shape, description };
  } catch {
    // A getter or proxy trap threw while we read the node.
    return { tsType: 'JsonValue' };
  }
}

function shapeOf(input: Record<string, unknown>, depth: number, limits: SchemaLimits, budget: Budget): SafeNode {
  if (own(input, '$ref') !== undefined) return { tsType: 'JsonValue' };
  // OpenAPI 3.0's `nullable`: the shape, or null.
  if (own(input, 'nullable') === true) {
    const { nullable: _nullable, description: _description, ...rest } = input;
    return { oneOf: [shapeOf(rest, depth + 1, limits, budget), { type: 'null' }] };
  }
  const all = own(input, 'allOf');
  if (Array.isArray(all) && all.length > 0 && all.length <= limits.maxMembers && own(input, 'oneOf') === undefined && own(input, 'anyOf') === undefined) {
    return all.length === 1 ? node(all[0], depth + 1, limits, budget) : { allOf: all.map((branch) => node(branch, depth + 1, limits, budget)) };
  }

  const branches = own(input, 'oneOf') ?? own(input, 'anyOf');
  if (Array.isArray(branches)) {
    if (branches.length === 0 || branches.length > limits.maxMembers) return { tsType: 'JsonValue' };
    return { oneOf: branches.map((branch) => node(branch, depth + 1, limits, budget)) };
  }

  const type = own(input, 'type');
  const literals = literalsOf(input, limits);
  if (literals !== undefined) return { enum: literals };

  if (Array.isArray(type)) {
    if (type.length === 0 || !type.every((t) => typeof t === 'string' && TYPES.has(t))) return { tsType: 'JsonValue' };
    const types = [...new Set(type as string[])];
    if (types.length === 1) return typed(input, types[0], depth, limits, budget);
    return { oneOf: types.map((t) => typed(input, t, depth + 1, limits, budget)) };
  }
  if (typeof type === 'string' && TYPES.has(type)) return typed(input, type, depth, limits, budget);
  return { tsType: 'JsonValue' };
}

function typed(
  input: Record<string, unknown>,
  type: string,
  depth: number,
  limits: SchemaLimits,
  budget: Budget,
): SafeNode {
  if (SCALARS.has(type)) return { type: type as SafeNode['type'] };
  if (type === 'array') {
    const items = own(input, 'items');
    return { type: 'array', items: isRecord(items) ? node(items, depth + 1, limits, budget) : { tsType: 'JsonValue' } };
  }
  return objectNode(input, depth, limits, budget);
}

function objectNode(input: Record<string, unknown>, depth: number, limits: SchemaLimits, budget: Budget): SafeNode {
  let open = own(input, 'additionalProperties') !== false;
  const source = own(input, 'properties');
  const keys = isRecord(source) ? Object.keys(source) : [];
  if (keys.length === 0) return { tsType: open ? 'JsonObject' : 'Record<string, never>' };

  const properties: Record<string, SafeNode> = Object.create(null);
  for (const key of keys) {
    if (exhausted(budget)) {
      // The dropped keys stay allowed: as any JSON.
      open = true;
      break;
    }
    // defineProperty: a key such as `__proto__` must stay an ordinary own key.
    Object.defineProperty(properties, key, {
      value: node((source as Record<string, unknown>)[key], depth + 1, limits, budget),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  const requiredList = own(input, 'required');
  const required = Array.isArray(requiredList)
    ? [...new Set(requiredList.filter((k): k is string => typeof k === 'string' && Object.hasOwn(properties, k)))]
    : [];
  const closed: SafeNode = { type: 'object', properties, required, additionalProperties: false };
  return open ? { allOf: [closed, { tsType: 'JsonObject' }] } : closed;
}

/** `const` / `enum` as literal members, or undefined when the node has none we can render. */
function literalsOf(input: Record<string, unknown>, limits: SchemaLimits): Literal[] | undefined {
  if (Object.prototype.propertyIsEnumerable.call(input, 'const')) {
    const value = own(input, 'const');
    return isLiteral(value, limits) ? [value] : undefined;
  }
  const list = own(input, 'enum');
  if (!Array.isArray(list) || list.length === 0 || list.length > limits.maxMembers) return undefined;
  const out: Literal[] = [];
  for (const value of list) {
    if (!isLiteral(value, limits)) return undefined;
    if (!out.includes(value)) out.push(value);
  }
  return out;
}

function isLiteral(value: unknown, limits: SchemaLimits): value is Literal {
  if (value === null || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'string' && value.length <= limits.maxLiteralLength;
}

/** Constraints the typings cannot express as types, shown as JSDoc tags (`@minLength 3`, `@format email`). */
const CONSTRAINT_KEYS = [
  'format',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
] as const;

/** The node's description, plus a primitive `default` and its constraints as JSDoc tags. */
function describe(input: Record<string, unknown>, limits: SchemaLimits): string | undefined {
  const raw = own(input, 'description');
  const text = typeof raw === 'string' ? cleanDescription(raw, limits) : undefined;
  const tags: string[] = [];
  const fallback = own(input, 'default');
  if (isLiteral(fallback, limits)) tags.push(`@default ${cleanDescription(JSON.stringify(fallback), limits)}`);
  for (const key of CONSTRAINT_KEYS) {
    const value = own(input, key);
    if (typeof value === 'number' || typeof value === 'boolean' || (typeof value === 'string' && value.length <= limits.maxLiteralLength)) {
      const shown = cleanDescription(String(value), limits);
      if (shown !== undefined) tags.push(`@${key} ${shown}`);
    }
  }
  const tag = tags.length === 0 ? undefined : tags.join('\n');
  if (text === undefined) return tag;
  return tag === undefined ? text : `${text}\n${tag}`;
}

/** An own enumerable property, as JSON would see it. */
function own(record: Record<string, unknown>, key: string): unknown {
  return Object.prototype.propertyIsEnumerable.call(record, key) ? record[key] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
