/**
 * A small explicit-stack validator for the raw subset. ajv's compiler recurses
 * per schema level and its generated code nests one scope per level, so deep
 * schemas overflow the stack there; `createValidator` routes those here. It is
 * also how exact oneOf match counts are computed (ajv stops counting at two).
 * Same semantics and wording as the ajv engine.
 *
 * Why a second engine rather than ajv alone with a depth bound at
 * registration: a bound would remove only the first reason. ajv also skips a
 * property named `__proto__` (a legal property and tool name here, so its
 * schema would silently go unchecked), and it stops counting `oneOf` matches
 * at two, while the violation says how many branches matched.
 */
import { appendIndex, appendKey } from '../json-path.ts';
import type { JsonSchemaNode } from './types.ts';
import { matchesType } from './keywords.ts';
import { formatViolation, type ViolationRecord } from './violation-format.ts';

/** A schema node in one uniform shape (monomorphic property access on the hot path). */
interface Node {
  type: string | undefined;
  enum: readonly unknown[] | undefined;
  hasConst: boolean;
  const: unknown;
  oneOf: Node[] | undefined;
  /** Property schemas by name; a Map, so `__proto__` is an ordinary name. */
  properties: Map<string, Node> | undefined;
  required: readonly string[];
  closed: boolean;
  items: Node | undefined;
}

/** A lazily rendered path: parent link plus key or index. */
interface Path {
  parent: Path | undefined;
  key: string | number;
}

interface Found {
  path: Path | undefined;
  record: ViolationRecord;
  branch: number | undefined;
}

interface CheckTask {
  oneOf: false;
  node: Node;
  value: unknown;
  path: Path | undefined;
  sink: Found[];
}
interface OneOfTask {
  oneOf: true;
  branches: number;
  path: Path | undefined;
  sinks: Found[][];
  sink: Found[];
}
type Task = CheckTask | OneOfTask;

/** A compiled iterative validator: violations as strings with paths from `root`. Reads of hostile values may throw. */
export type IterativeValidate = (value: unknown, root: string) => string[];

export function compileIterative(schema: JsonSchemaNode): IterativeValidate {
  const node = prepare(schema);
  return (value, root) => collect(node, value).map((found) => formatViolation(render(root, found.path), found.record, found.branch));
}

/** Indices of the `oneOf` branches of `schema` that `value` matches. */
export function matchingBranches(schema: JsonSchemaNode, value: unknown): number[] {
  const matched: number[] = [];
  (schema.oneOf ?? []).forEach((branch, i) => {
    if (collect(prepare(branch), value).length === 0) matched.push(i);
  });
  return matched;
}

function prepare(schema: JsonSchemaNode): Node {
  const make = (s: JsonSchemaNode): Node => ({
    type: s.type,
    enum: s.enum,
    hasConst: Object.hasOwn(s, 'const'),
    const: s.const,
    oneOf: undefined,
    properties: undefined,
    required: s.required ?? [],
    closed: s.additionalProperties === false,
    items: undefined,
  });
  const root = make(schema);
  const stack: [JsonSchemaNode, Node][] = [[schema, root]];
  while (stack.length > 0) {
    const [s, n] = stack.pop()!;
    if (s.oneOf !== undefined) {
      n.oneOf = s.oneOf.map((branch) => {
        const child = make(branch);
        stack.push([branch, child]);
        return child;
      });
    }
    if (s.properties !== undefined) {
      const map = new Map<string, Node>();
      for (const name of Object.keys(s.properties)) {
        const child = make(s.properties[name]);
        map.set(name, child);
        stack.push([s.properties[name], child]);
      }
      n.properties = map;
    }
    if (s.items !== undefined) {
      n.items = make(s.items);
      stack.push([s.items, n.items]);
    }
  }
  return root;
}

function collect(root: Node, value: unknown): Found[] {
  const result: Found[] = [];
  const stack: Task[] = [{ oneOf: false, node: root, value, path: undefined, sink: result }];
  while (stack.length > 0) {
    const task = stack.pop()!;
    if (task.oneOf) finishOneOf(task);
    else check(task, stack);
  }
  return result;
}

function finishOneOf(task: OneOfTask): void {
  const matched: number[] = [];
  for (let i = 0; i < task.sinks.length; i++) if (task.sinks[i].length === 0) matched.push(i);
  if (matched.length === 1) return;
  if (matched.length === 0) {
    task.sinks.forEach((sink, i) => {
      for (const found of sink) task.sink.push({ path: found.path, record: found.record, branch: found.branch ?? i });
    });
  }
  task.sink.push({ path: task.path, record: { keyword: 'oneOf', branches: task.branches, matched }, branch: undefined });
}

function check(task: CheckTask, stack: Task[]): void {
  const { node, value, path, sink } = task;
  if (node.type !== undefined && !matchesType(value, node.type)) {
    sink.push({ path, record: { keyword: 'type', type: node.type, actual: value }, branch: undefined });
  }
  if (node.enum !== undefined && !node.enum.some((allowed) => jsonEqual(allowed, value))) {
    sink.push({ path, record: { keyword: 'enum', allowed: node.enum }, branch: undefined });
  }
  if (node.hasConst && !jsonEqual(node.const, value)) {
    sink.push({ path, record: { keyword: 'const', expected: node.const }, branch: undefined });
  }
  if (node.oneOf !== undefined) {
    const sinks = node.oneOf.map((): Found[] => []);
    stack.push({ oneOf: true, branches: node.oneOf.length, path, sinks, sink });
    for (let i = node.oneOf.length - 1; i >= 0; i--) {
      stack.push({ oneOf: false, node: node.oneOf[i], value, path, sink: sinks[i] });
    }
  }
  if (node.type === 'object' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    for (const name of node.required) {
      if (ownValue(record, name) === undefined) {
        sink.push({ path, record: { keyword: 'required', missing: name }, branch: undefined });
      }
    }
    if (node.closed) {
      for (const key of Object.keys(record)) {
        if (node.properties?.has(key) !== true) {
          sink.push({ path, record: { keyword: 'additionalProperties', extra: key }, branch: undefined });
        }
      }
    }
    if (node.properties !== undefined) {
      const children: CheckTask[] = [];
      for (const [name, child] of node.properties) {
        const property = ownValue(record, name);
        if (property === undefined) continue;
        children.push({ oneOf: false, node: child, value: property, path: { parent: path, key: name }, sink });
      }
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
  }
  if (node.type === 'array' && node.items !== undefined && Array.isArray(value)) {
    for (let i = value.length - 1; i >= 0; i--) {
      stack.push({ oneOf: false, node: node.items, value: value[i], path: { parent: path, key: i }, sink });
    }
  }
}

/**
 * `record[name]`, except that an inherited `__proto__` reads as missing.
 * (Object.hasOwn costs ~80 ns here, so it is kept off the common path, as
 * ajv without ownProperties does.)
 */
function ownValue(record: Record<string, unknown>, name: string): unknown {
  if (name === '__proto__') return Object.hasOwn(record, name) ? record[name] : undefined;
  return record[name];
}

function render(root: string, path: Path | undefined): string {
  const keys: (string | number)[] = [];
  for (let p = path; p !== undefined; p = p.parent) keys.push(p.key);
  let out = root;
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i];
    out = typeof key === 'number' ? appendIndex(out, key) : appendKey(out, key);
  }
  return out;
}

/** Deep equality of JSON values, iterative (key order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const pairs: unknown[] = [a, b];
  while (pairs.length > 0) {
    const y = pairs.pop();
    const x = pairs.pop();
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) pairs.push(x[i], y[i]);
      continue;
    }
    if (Array.isArray(y)) return false;
    const xs = Object.keys(x);
    if (xs.length !== Object.keys(y).length) return false;
    for (const key of xs) {
      if (!Object.hasOwn(y, key)) return false;
      pairs.push((x as Record<string, unknown>)[key], (y as Record<string, unknown>)[key]);
    }
  }
  return true;
}
