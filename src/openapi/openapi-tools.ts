/**
 * `openApiTools`: an OpenAPI spec as canonical tool definitions, one per
 * operation, named `<name>__<operationId>`. The definitions own their input
 * validation (ajv against the operation's full schemas); the output is
 * enforced when the success response's JSON schema converts exactly to the
 * raw subset, and otherwise typed from it and marked unvalidated. Requests
 * are made on the host; configured headers never reach a program.
 */
import picomatch from 'picomatch';
import type { ContentBlock } from '../content.ts';
import { PtcError } from '../errors.ts';
import type { JsonObject, JsonValue } from '../json.ts';
import { createSchemaFamily, type FullValidate } from '../schema/full-validate.ts';
import type { JsonSchemaNode } from '../schema/types.ts';
import type { ToolDefinition } from '../tool.ts';
import { staticToolSource, type ToolSource } from '../tool-source.ts';
import { OPENAPI_DEFAULTS, SOURCE_NAME, type OpenApiSourceConfig } from './config.ts';
import { planOperations, type OperationPlan } from './operations.ts';
import { callOperation, httpClient, type RequestSettings, type TextResponse } from './request.ts';
import { toolSourceChannel, traceWithin, type ToolSourceMessage } from '../tracing.ts';
import { inlineSchema, isRecord, toSubset, type InlineCache, type Inlined } from './schemas.ts';

export interface OpenApiToolsOptions extends Omit<OpenApiSourceConfig, 'spec'> {
  /** Prefixes every tool name: `<name>__<operationId>`. */
  name: string;
  /** A file path or http(s) URL of the spec, or the parsed document itself. */
  spec: string | object;
  /** Where `${env:NAME}` in `headers` is read. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The value of an operation whose success response is not JSON. */
export type OpenApiTextValue = TextResponse;

/** Characters of an operation's description kept in its tool's description (when it has no summary). */
const MAX_DESCRIPTION_CHARS = 400;

const TEXT_OUTPUT: JsonSchemaNode = {
  type: 'object',
  properties: {
    contentType: { type: 'string', description: 'The response Content-Type.' },
    text: { type: 'string', description: 'The response body as text.' },
  },
  required: ['contentType', 'text'],
  additionalProperties: false,
};

/**
 * Loads, parses and plans the spec; one definition per operation kept by
 * `include`/`exclude`. Throws naming the problem when the spec cannot be
 * read, has no base URL, or a header names an unset environment variable.
 */
export async function openApiTools(options: OpenApiToolsOptions): Promise<ToolDefinition<JsonObject, JsonValue>[]> {
  if (!SOURCE_NAME.test(options.name)) {
    throw new Error(`the OpenAPI source name ${JSON.stringify(options.name)} must be letters, digits, "-" and single "_" (it prefixes tool names as <name>__<operation>)`);
  }
  const document = await loadDocument(options.spec);
  const plan = planOperations(document, typeof options.spec === 'string' ? options.spec : undefined);
  const baseUrl = options.baseUrl ?? plan.baseUrl;
  if (baseUrl === undefined) throw new Error('the spec names no server URL: set baseUrl');
  const settings: RequestSettings = {
    baseUrl,
    headers: expandHeaders(options.headers ?? {}, options.env ?? process.env),
    maxResponseBytes: options.maxResponseBytes ?? OPENAPI_DEFAULTS.maxResponseBytes,
    retries: options.retries ?? OPENAPI_DEFAULTS.retries,
    client: await httpClient(),
  };
  const include = options.include === undefined ? undefined : matcher(options.include);
  const exclude = options.exclude === undefined ? undefined : matcher(options.exclude);
  const approval = approvalRule(options.approvals);
  // One ajv instance per spec: operations' schemas refer into the same document, compiled on first use.
  const family = createSchemaFamily(plan.version === '3.1' ? '2020-12' : 'draft-07', { [SPEC_ID]: document as object });
  const configured = new Set(Object.keys(settings.headers).map((header) => header.toLowerCase()));
  const inlined: InlineCache = new Map();
  const definitions: ToolDefinition<JsonObject, JsonValue>[] = [];
  for (const operation of plan.operations) {
    const keys = operationKeys(operation);
    if (include !== undefined && !keys.some(include)) continue;
    if (exclude !== undefined && keys.some(exclude)) continue;
    // A configured header always wins: the operation's parameter of that name is not offered.
    const own = { ...operation, parameters: operation.parameters.filter((p) => !(p.in === 'header' && configured.has(p.name.toLowerCase()))) };
    definitions.push(
      operationDefinition(options.name, own, (schema) => inlineSchema(schema, document, inlined), family, settings, options.timeoutMs ?? OPENAPI_DEFAULTS.timeoutMs, approval(own)),
    );
  }
  return definitions;
}

/** An OpenAPI spec as a tool source (`openapi: { <name>: {...} }` in the service's config). */
export function openApiToolSource(name: string, config: OpenApiSourceConfig, env?: Readonly<Record<string, string | undefined>>): ToolSource {
  return staticToolSource('openapi', name, () => openApiTools({ ...config, name, ...(env === undefined ? {} : { env }) }));
}

const SPEC_ID = 'spec';

async function loadDocument(spec: string | object): Promise<Record<string, unknown>> {
  let document: unknown;
  try {
    // Loaded on use: a service without OpenAPI sources never loads the parser.
    const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
    document = await SwaggerParser.parse(spec as string);
    // References to other files or URLs are pulled in once; a spec with local references only (most) skips that walk.
    if (hasExternalRef(document)) document = await SwaggerParser.bundle(spec as string);
  } catch (error) {
    throw new Error(`the spec could not be read: ${firstLine(error)}`, { cause: error });
  }
  if (!isRecord(document)) throw new Error('the spec is not an object');
  return document;
}

/** Nodes looked at for a `$ref` to another file; a document passed in as an object could be cyclic. */
const MAX_SCANNED_NODES = 20_000_000;

function hasExternalRef(root: unknown): boolean {
  const stack: unknown[] = [root];
  for (let scanned = 0; stack.length > 0 && scanned < MAX_SCANNED_NODES; scanned++) {
    const node = stack.pop() as Record<string, unknown>;
    for (const key in node) {
      const child = node[key];
      if (typeof child === 'object' && child !== null) stack.push(child);
      else if (key === '$ref' && typeof child === 'string' && !child.startsWith('#')) return true;
    }
  }
  return false;
}

function operationDefinition(
  source: string,
  operation: OperationPlan,
  inline: (schema: unknown) => Inlined,
  family: { compile(schema: object): FullValidate },
  settings: RequestSettings,
  timeoutMs: number,
  needsApproval: boolean,
): ToolDefinition<JsonObject, JsonValue> {
  const name = `${source}__${operation.slug}`;
  const method = operation.method.toUpperCase();
  const output = outputOf(operation, inline);
  let validate: FullValidate | undefined;
  const definition: ToolDefinition<JsonObject, JsonValue> = {
    name,
    description: describeOperation(operation),
    parameters: argumentsSchema(operation, (schema) => inline(schema).node) as JsonSchemaNode,
    validateArguments: false,
    timeoutMs,
    output: {
      schema: output.schema,
      render: (_args, value) => renderValue(value),
      ...(output.declared === undefined ? {} : { unvalidatedSchema: output.declared }),
    },
    // Reads may overlap; anything that may change state runs alone.
    isConcurrencySafe: () => method === 'GET' || method === 'HEAD',
    async execute(args, exec) {
      validate ??= compileArguments(family, operation);
      const violations = validate(args, 'arguments');
      if (violations.length > 0) {
        throw new PtcError('INVALID_ARGS', `arguments of ${name} (${method} ${operation.path}) do not match its schema:\n- ${violations.join('\n- ')}`);
      }
      if (!toolSourceChannel.hasSubscribers) return (await callOperation(operation, args, settings, exec.signal)) as JsonValue;
      const message: ToolSourceMessage = {
        kind: 'openapi',
        callId: exec.callId,
        tool: name,
        server: new URL(settings.baseUrl).origin,
        operation: `${method} ${operation.path}`,
        carrier: {},
      };
      return (await traceWithin(toolSourceChannel, message, () => callOperation(operation, args, settings, exec.signal, message))) as JsonValue;
    },
  };
  if (needsApproval) definition.needsApproval = true;
  return definition;
}

/** The operation's arguments as one object schema: parameters by key, the body under its key. */
function argumentsSchema(operation: OperationPlan, schemaOf: (schema: unknown) => unknown): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const p of operation.parameters) {
    const schema = schemaOf(p.schema);
    const where = `${p.in} parameter${p.key === p.name ? '' : ` "${p.name}"`}`;
    const description = p.description === undefined ? `(${where})` : `${p.description.trim()} (${where})`;
    properties[p.key] = isRecord(schema) ? { ...schema, description } : { description };
    if (p.required) required.push(p.key);
  }
  if (operation.body !== undefined) {
    const schema = schemaOf(operation.body.schema);
    const description = operation.body.description?.trim() || `The request body (${operation.body.mediaType}).`;
    properties[operation.body.key] = isRecord(schema) ? { description, ...schema } : { description };
    if (operation.body.required) required.push(operation.body.key);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

/** The arguments' validator: the schemas as written, their `$ref`s pointing into the spec added to ajv. */
function compileArguments(family: { compile(schema: object): FullValidate }, operation: OperationPlan): FullValidate {
  try {
    return family.compile(argumentsSchema(operation, (schema) => rebaseRefs(schema)));
  } catch {
    // A schema ajv cannot compile is checked by the API itself: the call still goes out.
    return () => [];
  }
}

function rebaseRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebaseRefs);
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    Object.defineProperty(out, key, {
      value: key === '$ref' && typeof value === 'string' && value.startsWith('#') ? `${SPEC_ID}${value}` : rebaseRefs(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** The enforced schema, and the declared one when it could not be enforced. */
function outputOf(operation: OperationPlan, inline: (schema: unknown) => Inlined): { schema: JsonSchemaNode; declared?: JsonSchemaNode } {
  const response = operation.response;
  if (response.kind === 'text') return { schema: TEXT_OUTPUT };
  if (response.kind === 'none') return { schema: { description: 'The response body, if any (the spec declares none): parsed JSON, `{contentType, text}`, or null when empty.' } };
  const inlined = inline(response.schema);
  const enforced = toSubset(inlined);
  if (enforced !== undefined) return { schema: enforced };
  return { schema: {}, declared: inlined.node as JsonSchemaNode };
}

/**
 * The summary (else the description's first paragraph), then the method and
 * path: short, since a large spec is found through search, which long
 * descriptions dilute, and its parameters carry their own descriptions.
 */
function describeOperation(operation: OperationPlan): string {
  const parts: string[] = [];
  const summary = operation.summary?.trim() ?? '';
  const paragraph = operation.description?.trim().split(/\n\s*\n/, 1)[0] ?? '';
  if (summary !== '') parts.push(summary);
  else if (paragraph !== '') parts.push(paragraph.length > MAX_DESCRIPTION_CHARS ? `${paragraph.slice(0, MAX_DESCRIPTION_CHARS)}…` : paragraph);
  if (operation.deprecated) parts.push('Deprecated.');
  parts.push(`${operation.method.toUpperCase()} ${operation.path}`);
  return parts.join('\n\n');
}

function renderValue(value: JsonValue): ContentBlock[] {
  if (isRecord(value) && typeof value.text === 'string' && typeof value.contentType === 'string' && Object.keys(value).length === 2) {
    return [{ type: 'text', text: value.text }];
  }
  return [{ type: 'text', text: value === null ? '(empty response)' : JSON.stringify(value, null, 2) }];
}

/** What `include`, `exclude` and `approvals` globs match: the operationId, the slug, and `METHOD /path`. */
function operationKeys(operation: OperationPlan): string[] {
  const keys = [operation.slug, `${operation.method.toUpperCase()} ${operation.path}`];
  if (operation.operationId !== undefined) keys.unshift(operation.operationId);
  return keys;
}

function matcher(globs: readonly string[]): (key: string) => boolean {
  const tests = globs.map((glob) => picomatch(glob, { dot: true, nocase: false }));
  return (key) => tests.some((test) => test(key));
}

function approvalRule(approvals: OpenApiSourceConfig['approvals']): (operation: OperationPlan) => boolean {
  if (approvals === undefined) return () => false;
  if (Array.isArray(approvals)) {
    const match = matcher(approvals);
    return (operation) => operationKeys(operation).some(match);
  }
  const methods = new Set(approvals.methods.map((method) => method.toLowerCase()));
  return (operation) => methods.has(operation.method);
}

const ENV_REFERENCE = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** `${env:NAME}` replaced from `env`; an unset variable fails the start, named (its value never appears). */
function expandHeaders(headers: Readonly<Record<string, string>>, env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, template] of Object.entries(headers)) {
    out[name] = template.replace(ENV_REFERENCE, (_whole, variable: string) => {
      const value = env[variable];
      if (value === undefined || value === '') throw new Error(`header ${JSON.stringify(name)} refers to \${env:${variable}}, which is not set: set it in the environment`);
      return value;
    });
  }
  return out;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n', 1)[0];
}
