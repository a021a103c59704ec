/**
 * An OpenAPI 3.0/3.1 or Swagger 2.0 document → one plan per operation: its
 * parameters (path, query, header), its JSON (or form) request body, its
 * success response, and a stable tool name. Version differences end here.
 */
import { HTTP_METHODS, type HttpMethod } from './config.ts';
import { isRecord, resolvePointer } from './schemas.ts';

export type ParameterLocation = 'path' | 'query' | 'header';

export interface OperationParameter {
  /** The parameter's name on the wire. */
  name: string;
  in: ParameterLocation;
  /** Its key in the tool's arguments (the name, unless two locations share it). */
  key: string;
  required: boolean;
  /** Its schema as written (local `$ref`s unresolved). */
  schema: unknown;
  description?: string;
  /** Query arrays: repeated keys (`explode`, the default) or one comma-joined value. */
  explode: boolean;
}

export interface OperationBody {
  /** Its key in the tool's arguments: `body` (or `requestBody` when a parameter is named `body`). */
  key: string;
  required: boolean;
  mediaType: 'application/json' | 'application/x-www-form-urlencoded';
  schema: unknown;
  description?: string;
}

export type OperationResponse =
  | { kind: 'json'; schema: unknown; description?: string }
  | { kind: 'text'; mediaType: string }
  | { kind: 'none' };

export interface OperationPlan {
  /** The tool name's operation part: the operationId made an identifier, or a slug of method and path. */
  slug: string;
  operationId?: string;
  method: HttpMethod;
  /** The path template, `/pets/{petId}`. */
  path: string;
  summary?: string;
  description?: string;
  deprecated: boolean;
  parameters: OperationParameter[];
  body?: OperationBody;
  response: OperationResponse;
}

export interface ApiPlan {
  version: '2.0' | '3.0' | '3.1';
  title: string;
  /** The document's own base URL, when it has one. */
  baseUrl?: string;
  operations: OperationPlan[];
}

/** The plan of every operation, in document order; `specUrl` resolves a relative server URL. */
export function planOperations(document: Record<string, unknown>, specUrl?: string): ApiPlan {
  const version = versionOf(document);
  const swagger2 = version === '2.0';
  const info = isRecord(document.info) ? document.info : {};
  const operations: OperationPlan[] = [];
  const slugs = new Map<string, number>();
  const paths = isRecord(document.paths) ? document.paths : {};
  for (const [path, rawItem] of Object.entries(paths)) {
    const item = deref(document, rawItem);
    if (!isRecord(item)) continue;
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!isRecord(operation)) continue;
      const raw = [...listOf(item.parameters), ...listOf(operation.parameters)].map((p) => deref(document, p)).filter(isRecord);
      // An operation's parameter replaces the path item's of the same name and location.
      const byKey = new Map<string, Record<string, unknown>>();
      for (const p of raw) byKey.set(`${String(p.in)}:${String(p.name)}`, p);
      const plan: OperationPlan = {
        slug: uniqueSlug(slugOf(operation.operationId, method, path), slugs),
        method,
        path,
        deprecated: operation.deprecated === true,
        parameters: [],
        response: swagger2 ? swagger2Response(document, operation) : openApi3Response(document, operation),
      };
      if (typeof operation.operationId === 'string') plan.operationId = operation.operationId;
      if (typeof operation.summary === 'string') plan.summary = operation.summary;
      if (typeof operation.description === 'string') plan.description = operation.description;
      const params = [...byKey.values()];
      const bodyKey = params.some((p) => p.name === 'body' && p.in !== 'body') ? 'requestBody' : 'body';
      const names = new Map<string, number>();
      for (const p of params) if (p.in === 'path' || p.in === 'query' || p.in === 'header') names.set(String(p.name), (names.get(String(p.name)) ?? 0) + 1);
      for (const p of params) {
        if (p.in !== 'path' && p.in !== 'query' && p.in !== 'header') continue;
        const name = String(p.name);
        const parameter: OperationParameter = {
          name,
          in: p.in,
          key: names.get(name)! > 1 ? `${p.in}_${name}` : name,
          required: p.in === 'path' || p.required === true,
          schema: swagger2 ? swagger2ParameterSchema(p) : (p.schema ?? {}),
          explode: p.explode !== false && p.collectionFormat !== 'csv' && !(swagger2 && p.collectionFormat === undefined),
        };
        if (typeof p.description === 'string') parameter.description = p.description;
        plan.parameters.push(parameter);
      }
      const body = swagger2 ? swagger2Body(params, bodyKey) : openApi3Body(document, operation.requestBody, bodyKey);
      if (body !== undefined) plan.body = body;
      operations.push(plan);
    }
  }
  const baseUrl = swagger2 ? swagger2BaseUrl(document) : openApi3BaseUrl(document, specUrl);
  return {
    version,
    title: typeof info.title === 'string' ? info.title : 'API',
    ...(baseUrl === undefined ? {} : { baseUrl }),
    operations,
  };
}

function versionOf(document: Record<string, unknown>): ApiPlan['version'] {
  if (typeof document.swagger === 'string' && document.swagger.startsWith('2.')) return '2.0';
  if (typeof document.openapi === 'string' && document.openapi.startsWith('3.1')) return '3.1';
  if (typeof document.openapi === 'string' && document.openapi.startsWith('3.')) return '3.0';
  throw new Error('the document is neither OpenAPI 3.x (an "openapi" field) nor Swagger 2.0 (a "swagger" field)');
}

function deref(document: unknown, node: unknown): unknown {
  for (let hops = 0; isRecord(node) && typeof node.$ref === 'string' && hops < 16; hops++) node = resolvePointer(document, node.$ref);
  return node;
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `repos/get-content` → `repos_get_content`; without an operationId, `get_pets_petId`. */
function slugOf(operationId: unknown, method: string, path: string): string {
  const base = typeof operationId === 'string' && operationId.trim() !== '' ? operationId : `${method}_${path}`;
  const slug = base.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return slug === '' ? method : /^[0-9]/.test(slug) ? `op_${slug}` : slug;
}

function uniqueSlug(slug: string, seen: Map<string, number>): string {
  const count = (seen.get(slug) ?? 0) + 1;
  seen.set(slug, count);
  return count === 1 ? slug : `${slug}_${count}`;
}

const JSON_MEDIA = /^application\/(?:[\w.+-]*\+)?json\b|^\*\/\*$/i;

/** The first 2xx response (200 before 201 …, then `2XX`, then `default`) and what its body is. */
function successResponse(responses: unknown): unknown {
  if (!isRecord(responses)) return undefined;
  const codes = Object.keys(responses)
    .filter((code) => /^2\d\d$/.test(code))
    .sort();
  const code = codes[0] ?? (Object.hasOwn(responses, '2XX') ? '2XX' : Object.hasOwn(responses, 'default') ? 'default' : undefined);
  return code === undefined ? undefined : responses[code];
}

function openApi3Response(document: unknown, operation: Record<string, unknown>): OperationResponse {
  const response = deref(document, successResponse(operation.responses));
  if (!isRecord(response) || !isRecord(response.content)) return { kind: 'none' };
  const entries = Object.entries(response.content);
  const json = entries.find(([media]) => JSON_MEDIA.test(media));
  if (json !== undefined) {
    const media = isRecord(json[1]) ? json[1] : {};
    return { kind: 'json', schema: media.schema ?? {}, ...(typeof response.description === 'string' ? { description: response.description } : {}) };
  }
  return entries.length > 0 ? { kind: 'text', mediaType: entries[0][0] } : { kind: 'none' };
}

function swagger2Response(document: unknown, operation: Record<string, unknown>): OperationResponse {
  const response = deref(document, successResponse(operation.responses));
  if (!isRecord(response) || response.schema === undefined) return { kind: 'none' };
  const produces = listOf(operation.produces ?? (document as Record<string, unknown>).produces).filter((m): m is string => typeof m === 'string');
  if (produces.length > 0 && !produces.some((media) => JSON_MEDIA.test(media))) return { kind: 'text', mediaType: produces[0] };
  return { kind: 'json', schema: response.schema, ...(typeof response.description === 'string' ? { description: response.description } : {}) };
}

function openApi3Body(document: unknown, raw: unknown, key: string): OperationBody | undefined {
  const body = deref(document, raw);
  if (!isRecord(body) || !isRecord(body.content)) return undefined;
  const entries = Object.entries(body.content);
  const json = entries.find(([media]) => JSON_MEDIA.test(media));
  const form = entries.find(([media]) => media === 'application/x-www-form-urlencoded');
  const chosen = json ?? form;
  if (chosen === undefined) return undefined;
  const media = isRecord(chosen[1]) ? chosen[1] : {};
  return {
    key,
    required: body.required === true,
    mediaType: chosen === json ? 'application/json' : 'application/x-www-form-urlencoded',
    schema: media.schema ?? {},
    ...(typeof body.description === 'string' ? { description: body.description } : {}),
  };
}

/** A 2.0 body parameter, or its formData parameters as one object. */
function swagger2Body(params: Record<string, unknown>[], key: string): OperationBody | undefined {
  const body = params.find((p) => p.in === 'body');
  if (body !== undefined) {
    return {
      key,
      required: body.required === true,
      mediaType: 'application/json',
      schema: body.schema ?? {},
      ...(typeof body.description === 'string' ? { description: body.description } : {}),
    };
  }
  const form = params.filter((p) => p.in === 'formData' && p.type !== 'file');
  if (form.length === 0) return undefined;
  const properties: Record<string, unknown> = {};
  for (const p of form) properties[String(p.name)] = swagger2ParameterSchema(p);
  const required = form.filter((p) => p.required === true).map((p) => String(p.name));
  return { key, required: required.length > 0, mediaType: 'application/x-www-form-urlencoded', schema: { type: 'object', properties, required } };
}

const PARAMETER_ONLY = new Set(['name', 'in', 'required', 'collectionFormat', 'allowEmptyValue']);

/** A 2.0 non-body parameter carries its schema inline (`type`, `items`, `enum`, …). */
function swagger2ParameterSchema(p: Record<string, unknown>): Record<string, unknown> {
  const schema: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(p)) if (!PARAMETER_ONLY.has(key)) schema[key] = value;
  return schema;
}

function swagger2BaseUrl(document: Record<string, unknown>): string | undefined {
  if (typeof document.host !== 'string') return undefined;
  const schemes = listOf(document.schemes);
  const scheme = schemes.includes('https') ? 'https' : typeof schemes[0] === 'string' ? schemes[0] : 'https';
  return `${scheme}://${document.host}${typeof document.basePath === 'string' ? document.basePath : ''}`;
}

function openApi3BaseUrl(document: Record<string, unknown>, specUrl: string | undefined): string | undefined {
  const server = listOf(document.servers).find(isRecord);
  if (server === undefined || typeof server.url !== 'string') return undefined;
  // Server variables take their defaults.
  const variables = isRecord(server.variables) ? server.variables : {};
  const url = server.url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const variable = variables[name];
    return isRecord(variable) && typeof variable.default === 'string' ? variable.default : whole;
  });
  if (/^https?:\/\//i.test(url)) return url;
  return specUrl !== undefined && /^https?:\/\//i.test(specUrl) ? new URL(url, specUrl).href : undefined;
}
