/**
 * Value validation against the raw subset (docs/architecture.md, "Schemas"), on ajv 8.
 *
 * - One fresh Ajv instance per validator, compiled once (at registration):
 *   ajv's shared code scope grows with every compile, so a shared instance
 *   would grow per registered tool; a per-validator instance is released with
 *   the validator. Nothing is cached per call.
 * - Never mutates or coerces input: no useDefaults, coerceTypes or
 *   removeAdditional. allErrors, strictNumbers (NaN and
 *   ±Infinity are not numbers). oneOf is exactly-one; the message says how many
 *   branches matched, counted exactly by our own evaluator (ajv stops at two).
 * - Deep schemas: ajv's compiler recurses per schema level and its generated
 *   code nests one scope per level, so past {@link AJV_MAX_DEPTH} levels (or
 *   with very deep `enum`/`const` literals) the schema is validated by a small
 *   explicit-stack evaluator with the same semantics and wording instead; so
 *   are schemas with a property named `__proto__`, which ajv skips.
 * - Never throws on hostile input: a getter or proxy that throws becomes a
 *   violation naming its path.
 */
// Named import: ajv is CommonJS, and under NodeNext its default import is the module object.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { LossyJsonError, snapshotJson } from '../json.ts';
import { appendIndex, appendKey } from '../json-path.ts';
import type { JsonSchemaNode } from './types.ts';
import { normalizeRawSchema } from './subset.ts';
import { compileIterative, matchingBranches, type IterativeValidate } from './iterative-validator.ts';
import { formatViolation, type ViolationRecord } from './violation-format.ts';

export interface Validator {
  /**
   * The violations of `value`, each `path: message` with the path starting at
   * `root` (`arguments.a.b: must be string (got number)`,
   * `value.lines[2].text: …`); `[]` when valid. Never throws. A required key
   * holding `undefined` counts as missing. Losslessness is not re-checked
   * here: snapshot with `snapshotJson` first (the registry does).
   */
  validate(value: unknown, root: string): string[];
  /** Which engine this schema runs on: `ajv`, or `iterative` for schemas too deep for ajv. */
  readonly engine: 'ajv' | 'iterative';
}

/** Schemas nested deeper than this many schema levels run on the iterative engine. */
export const AJV_MAX_DEPTH = 32;
/** `enum`/`const` literals nested deeper than this run on the iterative engine (ajv's deep-equal recurses). */
const AJV_MAX_LITERAL_DEPTH = 256;

const AJV_OPTIONS = {
  allErrors: true,
  strict: false,
  strictNumbers: true,
  // ownProperties costs ~4x per call; inputs are snapshots (own data properties only).
  ownProperties: false,
  validateSchema: false,
  addUsedSchema: false,
  messages: false,
  useDefaults: false,
  coerceTypes: false,
  removeAdditional: false,
} as const;

/**
 * Compiles `schema` once. Throws `SchemaError` when it is outside the subset
 * (root `$schema`/`$id`/`$comment` are tolerated and dropped).
 */
export function createValidator(schema: JsonSchemaNode): Validator {
  const normal = normalizeRawSchema(schema);
  const iterative = compileIterative(normal);
  if (tooDeepForAjv(normal)) {
    return {
      engine: 'iterative',
      validate: (value, root) => guarded(iterative, value, root, () => iterative(value, root)),
    };
  }
  const compiled = new Ajv(AJV_OPTIONS).compile(normal);
  return {
    engine: 'ajv',
    validate: (value, root) =>
      guarded(iterative, value, root, () => {
        if (compiled(value)) return [];
        return describeErrors(compiled, normal, value, root);
      }),
  };
}

function guarded(iterative: IterativeValidate, value: unknown, root: string, run: () => string[]): string[] {
  try {
    return run();
  } catch {
    // A hostile value (throwing getter or proxy), or ajv out of stack: the
    // iterative engine answers when it can read the value, else name the part
    // that cannot be read.
    try {
      return iterative(value, root);
    } catch {
      return [unreadable(value, root)];
    }
  }
}

function unreadable(value: unknown, root: string): string {
  try {
    snapshotJson(value, root);
  } catch (error) {
    if (error instanceof LossyJsonError) return `${error.violation.path}: ${error.violation.message}`;
  }
  return formatViolation(root, { keyword: 'unreadable' });
}

function describeErrors(compiled: ValidateFunction, schema: JsonSchemaNode, value: unknown, root: string): string[] {
  const out: string[] = [];
  const errors = compiled.errors ?? [];
  // A oneOf that matched two or more branches fails on its own; ajv also keeps the
  // reasons its other branches failed, which say nothing useful. Drop them.
  const overmatched = errors.filter((e) => e.keyword === 'oneOf' && (e.params as { passingSchemas: unknown }).passingSchemas !== null);
  for (const error of errors) {
    if (overmatched.some((o) => isInside(error, o))) continue;
    const { path, instance } = resolveInstance(value, root, error.instancePath);
    const record = toRecord(error, schema, instance);
    if (record !== undefined) out.push(formatViolation(path, record, innermostBranch(error.schemaPath)));
  }
  return out;
}

function isInside(error: ErrorObject, oneOf: ErrorObject): boolean {
  return (
    error.schemaPath.startsWith(`${oneOf.schemaPath}/`) &&
    (error.instancePath === oneOf.instancePath || error.instancePath.startsWith(`${oneOf.instancePath}/`))
  );
}

function toRecord(error: ErrorObject, schema: JsonSchemaNode, instance: unknown): ViolationRecord | undefined {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return { keyword: 'type', type: String(params.type), actual: instance };
    case 'required':
      return { keyword: 'required', missing: String(params.missingProperty) };
    case 'additionalProperties':
      return { keyword: 'additionalProperties', extra: String(params.additionalProperty) };
    case 'enum':
      return { keyword: 'enum', allowed: params.allowedValues as unknown[] };
    case 'const':
      return { keyword: 'const', expected: params.allowedValue };
    case 'oneOf': {
      const node = resolveSchema(schema, error.schemaPath);
      const branches = node.oneOf?.length ?? 0;
      const matched = params.passingSchemas === null ? [] : matchingBranches(node, instance);
      return { keyword: 'oneOf', branches, matched };
    }
    default:
      return undefined;
  }
}

/** Renders an ajv instance path (a JSON pointer) as `root.a[2].b`, telling indices from keys by the value. */
function resolveInstance(value: unknown, root: string, pointer: string): { path: string; instance: unknown } {
  let path = root;
  let current = value;
  if (pointer === '') return { path, instance: current };
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      path = appendIndex(path, Number(segment));
      current = current[Number(segment)];
    } else {
      path = appendKey(path, segment);
      current = typeof current === 'object' && current !== null ? (current as Record<string, unknown>)[segment] : undefined;
    }
  }
  return { path, instance: current };
}

/** The node a schema path (`#/properties/c/oneOf`) points at, minus the keyword itself. */
function resolveSchema(schema: JsonSchemaNode, schemaPath: string): JsonSchemaNode {
  // ajv's schema paths are URI fragments: percent-encoded JSON pointers.
  const segments = schemaPath.replace(/^#\/?/, '').split('/').filter((s) => s !== '');
  segments.pop();
  let node: unknown = schema;
  for (const raw of segments) {
    const segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    node = (node as Record<string, unknown>)[segment];
  }
  return node as JsonSchemaNode;
}

function innermostBranch(schemaPath: string): number | undefined {
  const matches = [...schemaPath.matchAll(/\/oneOf\/(\d+)(?=\/)/g)];
  return matches.length === 0 ? undefined : Number(matches[matches.length - 1][1]);
}

/** True when ajv would recurse too deep on this schema, or mishandle it (`__proto__` properties). */
function tooDeepForAjv(schema: JsonSchemaNode): boolean {
  const stack: [unknown, number, boolean][] = [[schema, 1, true]];
  while (stack.length > 0) {
    const [node, depth, isSchema] = stack.pop()!;
    if (isSchema ? depth > AJV_MAX_DEPTH : depth > AJV_MAX_LITERAL_DEPTH) return true;
    if (typeof node !== 'object' || node === null) continue;
    if (!isSchema) {
      for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1, false]);
      continue;
    }
    const n = node as JsonSchemaNode;
    // ajv skips properties named __proto__ (and would count them as additional).
    if (n.properties !== undefined && Object.hasOwn(n.properties, '__proto__')) return true;
    if (n.required?.includes('__proto__') === true) return true;
    for (const child of Object.values(n.properties ?? {})) stack.push([child, depth + 1, true]);
    for (const child of n.oneOf ?? []) stack.push([child, depth + 1, true]);
    if (n.items !== undefined) stack.push([n.items, depth + 1, true]);
    if (n.enum !== undefined) stack.push([n.enum, 1, false]);
    if (Object.hasOwn(n, 'const')) stack.push([n.const, 1, false]);
  }
  return false;
}
