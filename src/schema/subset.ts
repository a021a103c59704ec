/**
 * The raw JSON Schema subset (docs/architecture.md, "Schemas"): `type` (one string), `oneOf`,
 * `properties`, `required`, `additionalProperties` (boolean), `items` (one
 * schema), `enum`, `const` and the annotations. Raw and dynamic (MCP)
 * definitions may declare only this; anything else is refused with every
 * violation listed, never accepted and silently ignored.
 */
import { deepFreeze, snapshotJson } from '../json.ts';
import { appendIndex, appendKey } from '../json-path.ts';
import {
  ANNOTATION_KEYS,
  ROOT_DECORATION_KEYS,
  SUBSET_TYPES,
  SUPPORTED_KEYWORDS_HINT,
  checkAnnotation,
  checkLiterals,
  isPlainRecord,
} from './keywords.ts';
import { SchemaError } from './schema-error.ts';
import type { JsonSchemaNode } from './types.ts';

export interface SubsetOptions {
  /**
   * Accept `$schema`, `$id` and `$comment` at the root as annotations (MCP
   * servers emit them); {@link normalizeRawSchema} drops them. Anywhere else
   * they stay violations. Default false.
   */
  allowRootDecorations?: boolean;
  /** Names the root in violation paths. Default `schema`. */
  root?: string;
}

const OBJECT_KEYS = new Set(['properties', 'required', 'additionalProperties']);

interface Task {
  node: unknown;
  path: string;
  /** Set for the marker that closes `node` (leaves the ancestor set). */
  exit: boolean;
}

/**
 * The violations of `node` against the raw subset, each `path: message`;
 * empty when it is inside. Never throws; iterative (deep schemas are fine).
 * A cyclic schema is a violation; one object reused in sibling places is not.
 */
export function checkSchemaSubset(node: unknown, options: SubsetOptions = {}): string[] {
  const violations: string[] = [];
  const root = options.root ?? 'schema';
  const ancestors = new Set<unknown>();
  const checked = new Set<unknown>();
  const stack: Task[] = [{ node, path: root, exit: false }];
  while (stack.length > 0) {
    const task = stack.pop()!;
    if (task.exit) {
      ancestors.delete(task.node);
      checked.add(task.node);
      continue;
    }
    if (ancestors.has(task.node)) {
      violations.push(`${task.path}: is a cycle (this schema contains itself); schemas must be finite trees`);
      continue;
    }
    if (checked.has(task.node)) continue;
    const children: Task[] = [];
    try {
      checkNode(task.node, task.path, task.path === root && task.node === node && options.allowRootDecorations === true, violations, children);
    } catch {
      violations.push(`${task.path}: could not be read (a getter or proxy threw); pass plain JSON`);
      continue;
    }
    if (typeof task.node === 'object' && task.node !== null) {
      ancestors.add(task.node);
      stack.push({ node: task.node, path: task.path, exit: true });
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return violations;
}

/**
 * A detached, deep-frozen copy of a raw schema with the root decorations
 * (`$schema`, `$id`, `$comment`) removed. Throws {@link SchemaError} listing
 * every violation when `node` is outside the subset. Root decorations are
 * allowed unless `options.allowRootDecorations` is false (default here: true).
 */
export function normalizeRawSchema(node: unknown, options: SubsetOptions = {}): JsonSchemaNode {
  const effective: SubsetOptions = { allowRootDecorations: true, ...options };
  const violations = checkSchemaSubset(node, effective);
  if (violations.length > 0) throw new SchemaError(violations);
  // Inside the subset means acyclic JSON, so the snapshot cannot fail.
  const copy = snapshotJson(node, effective.root ?? 'schema') as Record<string, unknown>;
  for (const key of ROOT_DECORATION_KEYS) delete copy[key];
  return deepFreeze(copy) as JsonSchemaNode;
}

function checkNode(node: unknown, path: string, decorations: boolean, out: string[], children: Task[]): void {
  if (!isPlainRecord(node)) {
    out.push(`${path}: must be a schema object such as {"type": "string"}, got ${describe(node)}`);
    return;
  }
  const keys = Object.keys(node);
  const hasType = Object.hasOwn(node, 'type');
  const type = node.type;
  const typeName = typeof type === 'string' ? type : undefined;
  const here = (message: string): void => {
    out.push(`${path}: ${message}`);
  };
  for (const key of keys) {
    const value = node[key];
    switch (key) {
      case 'type':
        if (Array.isArray(value)) here('`type` arrays are not supported: use oneOf with one branch per type');
        else if (typeof value !== 'string' || !SUBSET_TYPES.has(value)) {
          here(`\`type\` ${JSON.stringify(value) ?? String(value)} is not supported: use one of ${[...SUBSET_TYPES].join(', ')}`);
        }
        break;
      case 'oneOf':
        if (!Array.isArray(value) || value.length < 2) {
          here('`oneOf` needs an array of at least two schemas (a single schema needs no oneOf)');
        } else {
          value.forEach((branch, i) => children.push({ node: branch, path: appendIndex(`${path}.oneOf`, i), exit: false }));
        }
        for (const other of keys) {
          if (other === 'type' || OBJECT_KEYS.has(other) || other === 'items' || other === 'enum' || other === 'const') {
            here(`\`oneOf\` cannot sit beside \`${other}\`: move \`${other}\` into each branch`);
          }
        }
        break;
      case 'properties':
        if (!isPlainRecord(value)) here('`properties` must be an object mapping each key to a schema');
        else {
          for (const name of Object.keys(value)) {
            children.push({ node: value[name], path: appendKey(`${path}.properties`, name), exit: false });
          }
        }
        break;
      case 'required':
        if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) {
          here('`required` must be an array of property names');
        } else if (new Set(value).size !== value.length) {
          here('`required` lists a property twice: list each once');
        }
        break;
      case 'additionalProperties':
        if (typeof value !== 'boolean') {
          here('`additionalProperties` must be true or false (schema-valued additionalProperties is not supported)');
        }
        break;
      case 'items':
        if (Array.isArray(value)) here('`items` must be one schema: tuple arrays are not supported');
        else children.push({ node: value, path: `${path}.items`, exit: false });
        break;
      case 'enum':
      case 'const':
        break;
      default: {
        if (ANNOTATION_KEYS.has(key)) {
          const problem = checkAnnotation(key, value);
          if (problem !== undefined) here(problem);
        } else if (decorations && ROOT_DECORATION_KEYS.has(key)) {
          if (typeof value !== 'string') here(`\`${key}\` must be a string`);
        } else {
          here(`\`${key}\` is not supported: ${SUPPORTED_KEYWORDS_HINT}; check anything else inside the tool`);
        }
      }
    }
    if (OBJECT_KEYS.has(key) && hasType && type !== 'object') here(`\`${key}\` only applies to {"type": "object"} nodes`);
    if (OBJECT_KEYS.has(key) && !hasType && !Object.hasOwn(node, 'oneOf')) {
      here(`\`${key}\` needs "type": "object" beside it`);
    }
    if (key === 'items' && type !== 'array' && !Object.hasOwn(node, 'oneOf')) {
      here('`items` needs "type": "array" beside it');
    }
  }
  for (const problem of checkLiterals(node, SUBSET_TYPES.has(typeName ?? '') ? typeName : undefined, typeName ?? '')) {
    here(problem);
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'a non-plain object' : typeof value;
}
