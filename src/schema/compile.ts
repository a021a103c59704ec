/**
 * The author DSL (docs/architecture.md, "Schemas") compiled to the raw subset. Every violation is
 * collected with its path (`parameters.a.items`) and thrown at once as one
 * {@link SchemaError}. Iterative: 5,000-deep schemas compile without
 * overflowing the stack. The spec is never mutated; the output is a fresh,
 * deep-frozen tree.
 */
import { deepFreeze, isLosslessJson, snapshotJson } from '../json.ts';
import { appendIndex, appendKey } from '../json-path.ts';
import { ANNOTATION_KEYS, SUPPORTED_KEYWORDS_HINT, checkAnnotation, checkLiterals, isPlainRecord } from './keywords.ts';
import { SchemaError } from './schema-error.ts';
import type { JsonSchemaNode, ValueSchemaSpec } from './types.ts';

export { SchemaError } from './schema-error.ts';

const DSL_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'array', 'object', 'json']);
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
/** Keywords each DSL node kind accepts besides the annotations (and `required` on a property entry). */
const ALLOWED: Record<string, ReadonlySet<string>> = {
  scalar: new Set(['type', 'enum', 'const']),
  array: new Set(['type', 'items']),
  object: new Set(['type', 'properties', 'additionalProperties']),
  json: new Set(['type']),
  oneOf: new Set(['oneOf']),
};

interface Task {
  spec: unknown;
  path: string;
  /** Compiled node to fill in place (created by the parent, so key order is stable). */
  out: Record<string, unknown>;
  /** True for an entry of a property map: `required: true` is allowed there. */
  property: boolean;
  exit: boolean;
}

/**
 * Compiles a value schema (an output schema, or one property) to the raw
 * subset. `json` becomes `{}` plus its annotations. `root` names the root in
 * violation paths (default `schema`). Throws {@link SchemaError}.
 */
export function compileValueSpec(spec: ValueSchemaSpec, root = 'schema'): JsonSchemaNode {
  const { node, violations } = compileValue(spec, root);
  if (violations.length > 0) throw new SchemaError(violations);
  return node;
}

/** Non-throwing form of {@link compileValueSpec}: the node (meaningful only without violations) and every violation. */
export function compileValue(spec: unknown, root = 'schema'): { node: JsonSchemaNode; violations: string[] } {
  const out: Record<string, unknown> = {};
  const violations = run([{ spec, path: root, out, property: false, exit: false }]);
  return { node: deepFreeze(out) as JsonSchemaNode, violations };
}

/**
 * Compiles a parameter property map to its root object node
 * `{type: 'object', properties, required, additionalProperties: true}`: the
 * root stays open. `root` names the root in violation paths (default
 * `parameters`). Returns the node (meaningful only without violations) and
 * every violation.
 */
export function compileParameters(spec: unknown, root = 'parameters'): { node: JsonSchemaNode; violations: string[] } {
  const out: Record<string, unknown> = { type: 'object' };
  const tasks: Task[] = [];
  const violations: string[] = [];
  try {
    if (!isPlainRecord(spec)) {
      violations.push(`${root}: must be a property map such as { path: { type: 'string', required: true } }`);
    } else {
      addProperties(spec, root, out, tasks);
    }
  } catch {
    violations.push(`${root}: could not be read (a getter or proxy threw); pass plain object literals`);
  }
  out.additionalProperties = true;
  violations.push(...run(tasks.reverse(), spec));
  return { node: deepFreeze(out) as JsonSchemaNode, violations };
}

function run(stack: Task[], rootSpec?: unknown): string[] {
  const violations: string[] = [];
  const ancestors = new Set<unknown>();
  if (rootSpec !== undefined && typeof rootSpec === 'object') ancestors.add(rootSpec);
  while (stack.length > 0) {
    const task = stack.pop()!;
    if (task.exit) {
      ancestors.delete(task.spec);
      continue;
    }
    if (ancestors.has(task.spec)) {
      violations.push(`${task.path}: is a cycle (this schema contains itself); schemas must be finite trees`);
      continue;
    }
    const children: Task[] = [];
    try {
      compileNode(task, violations, children);
    } catch {
      violations.push(`${task.path}: could not be read (a getter or proxy threw); pass plain object literals`);
      continue;
    }
    if (typeof task.spec === 'object' && task.spec !== null) {
      ancestors.add(task.spec);
      stack.push({ ...task, exit: true });
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return violations;
}

function compileNode(task: Task, violations: string[], children: Task[]): void {
  const { spec, path, out } = task;
  const here = (message: string): void => {
    violations.push(`${path}: ${message}`);
  };
  if (!isPlainRecord(spec)) {
    here("must be a schema object such as { type: 'string' }");
    return;
  }
  const keys = Object.keys(spec);
  let kind: string;
  if (Object.hasOwn(spec, 'oneOf')) {
    kind = 'oneOf';
    if (Object.hasOwn(spec, 'type')) here('`oneOf` cannot sit beside `type`: put the type in each branch');
    const branches = spec.oneOf;
    if (!Array.isArray(branches) || branches.length < 2) {
      here('`oneOf` needs an array of at least two schemas (a single schema needs no oneOf)');
    } else {
      const compiled = branches.map(() => ({}));
      out.oneOf = compiled;
      branches.forEach((branch, i) => {
        children.push({ spec: branch, path: appendIndex(`${path}.oneOf`, i), out: compiled[i], property: false, exit: false });
      });
    }
  } else {
    const type = spec.type;
    if (type === undefined) {
      here("needs a `type` (string, number, integer, boolean, null, array, object or json) or a `oneOf`");
      return;
    }
    if (Array.isArray(type)) {
      here('`type` arrays are not supported: use oneOf with one branch per type');
      return;
    }
    if (typeof type !== 'string' || !DSL_TYPES.has(type)) {
      here(`\`type\` ${JSON.stringify(type) ?? String(type)} is not supported: use one of ${[...DSL_TYPES].join(', ')}`);
      return;
    }
    kind = SCALAR_TYPES.has(type) ? 'scalar' : type;
    if (type !== 'json') out.type = type;
    if (kind === 'scalar') {
      for (const problem of checkLiterals(spec, type, type)) here(problem);
      if (Object.hasOwn(spec, 'enum') && isLosslessJson(spec.enum)) out.enum = snapshotJson(spec.enum);
      if (Object.hasOwn(spec, 'const') && isLosslessJson(spec.const)) out.const = snapshotJson(spec.const);
    } else if (kind === 'array') {
      if (Object.hasOwn(spec, 'items')) {
        const items: Record<string, unknown> = {};
        out.items = items;
        children.push({ spec: spec.items, path: `${path}.items`, out: items, property: false, exit: false });
      }
    } else if (kind === 'object') {
      const properties = spec.properties;
      if (properties !== undefined) {
        if (!isPlainRecord(properties)) here('`properties` must be a property map');
        else addProperties(properties, `${path}.properties`, out, children);
      }
      const additional = spec.additionalProperties;
      if (typeof additional === 'boolean') out.additionalProperties = additional;
      else if (additional === undefined) {
        here('an explicit object needs `additionalProperties: true` or `additionalProperties: false`: say whether extra keys are allowed');
      } else here('`additionalProperties` must be true or false');
    }
  }
  const allowed = ALLOWED[kind];
  for (const key of keys) {
    if (allowed.has(key)) continue;
    if (ANNOTATION_KEYS.has(key)) {
      const problem = checkAnnotation(key, spec[key]);
      if (problem !== undefined) here(problem);
      else out[key] = snapshotJson(spec[key]);
    } else if (key === 'required') {
      if (!task.property) here('`required` belongs on a property entry: mark it inside the parent properties map');
      else if (spec.required !== true) here('`required` must be `true` or left out');
    } else if (key === 'type') {
      // reported above
    } else if (isKnownElsewhere(key)) {
      here(`\`${key}\` does not belong on a ${kind === 'scalar' ? String(spec.type) : kind} node`);
    } else {
      here(`\`${key}\` is not supported: ${SUPPORTED_KEYWORDS_HINT}; check anything else inside the tool`);
    }
  }
}

function isKnownElsewhere(key: string): boolean {
  return ['type', 'enum', 'const', 'items', 'properties', 'additionalProperties', 'oneOf'].includes(key);
}

/** Fills `out.properties` and `out.required` from a property map and queues each entry. */
function addProperties(
  map: Record<string, unknown>,
  path: string,
  out: Record<string, unknown>,
  tasks: Task[],
): void {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const name of Object.keys(map)) {
    const entry = map[name];
    const compiled: Record<string, unknown> = {};
    // defineProperty: a property named `__proto__` must stay a property.
    Object.defineProperty(properties, name, { value: compiled, enumerable: true, writable: true, configurable: true });
    if (isPlainRecord(entry) && entry.required === true) required.push(name);
    tasks.push({ spec: entry, path: appendKey(path, name), out: compiled, property: true, exit: false });
  }
  out.properties = properties;
  out.required = required;
}
