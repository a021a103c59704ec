/**
 * Existing AI SDK tools as canonical definitions, so a program can call them
 * from run_code. Each keeps its key as its name. Any input schema the AI SDK
 * takes (zod 3, zod 4, `jsonSchema()`) is typed from its full JSON Schema and
 * validated by the tool's own schema: Standard Schema's `validate` where it
 * offers one (zod: constraints, defaults, transforms), else ajv on its JSON
 * Schema. A declared output schema inside the raw subset (after an exact
 * down-conversion) is enforced; any other is typed and marked unvalidated.
 * A tool's `needsApproval` carries over: a program's call pauses its run.
 */
import { asSchema, type Schema, type Tool } from 'ai';
import type { ContentBlock } from '../../src/content.ts';
import { PtcError } from '../../src/errors.ts';
import type { JsonObject, JsonValue } from '../../src/json.ts';
import { downConvertToSubset } from '../../src/schema/down-convert.ts';
import { compileFullSchema, type FullValidate } from '../../src/schema/full-validate.ts';
import { SchemaError } from '../../src/schema/schema-error.ts';
import type { JsonSchemaNode } from '../../src/schema/types.ts';
import type { AnyToolDefinition, ToolDefinition } from '../../src/tool.ts';

/**
 * One definition per tool, to `register` on a registry. Throws a
 * `SchemaError` naming the tool and the path of every schema that cannot be
 * read (or a tool without `execute`): nothing is half-converted.
 */
export function fromAiSdkTools(tools: Record<string, Tool>): AnyToolDefinition[] {
  const violations: string[] = [];
  const definitions: AnyToolDefinition[] = [];
  for (const [name, source] of Object.entries(tools)) {
    const before = violations.length;
    if (typeof source.execute !== 'function') violations.push(`${name}: has no execute function; only tools this process runs can be called from a program`);
    const input = readSchema(source.inputSchema, `${name}.inputSchema`, violations);
    const output = source.outputSchema === undefined ? undefined : readSchema(source.outputSchema, `${name}.outputSchema`, violations);
    if (input !== undefined && input.json.type !== 'object') violations.push(`${name}.inputSchema: must be an object schema (the arguments are one JSON object)`);
    if (violations.length > before || input === undefined) continue;
    definitions.push(toDefinition(name, source, input, output) as unknown as AnyToolDefinition);
  }
  if (violations.length > 0) throw new SchemaError(violations);
  return definitions;
}

interface ReadSchema {
  /** The JSON Schema, as plain JSON. */
  json: Record<string, unknown>;
  schema: Schema<unknown>;
  /** The tool's own check: Standard Schema's validate, else ajv on `json`. */
  check(value: unknown, root: string): Promise<{ ok: true; value: unknown } | { ok: false; message: string }>;
}

function readSchema(flexible: unknown, root: string, violations: string[]): ReadSchema | undefined {
  let schema: Schema<unknown>;
  let raw: unknown;
  try {
    schema = asSchema(flexible as Parameters<typeof asSchema>[0]);
    raw = schema.jsonSchema;
  } catch (error) {
    violations.push(`${root}: could not be read as a schema (${messageOf(error)})`);
    return undefined;
  }
  if (typeof (raw as { then?: unknown } | null)?.then === 'function') {
    violations.push(`${root}: resolves asynchronously; pass a schema whose JSON Schema is known at once (zod, or jsonSchema({...}))`);
    return undefined;
  }
  // A JSON Schema is JSON: a copy through JSON drops what libraries hang on it (zod 4's non-enumerable "~standard").
  let json: unknown;
  try {
    json = JSON.parse(JSON.stringify(raw));
  } catch (error) {
    violations.push(`${root}: its JSON Schema is not JSON (${messageOf(error)})`);
    return undefined;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    violations.push(`${root}: its JSON Schema must be an object`);
    return undefined;
  }
  const record = json as Record<string, unknown>;
  if (schema.validate !== undefined) {
    const validate = schema.validate.bind(schema);
    return {
      json: record,
      schema,
      async check(value, at) {
        const result = await validate(value);
        return result.success ? { ok: true, value: result.value } : { ok: false, message: issuesOf(result.error, at) };
      },
    };
  }
  let compiled: FullValidate;
  try {
    compiled = compileFullSchema(record, typeof record.$schema === 'string' && record.$schema.includes('2020-12') ? '2020-12' : 'draft-07');
  } catch (error) {
    violations.push(`${root}: ajv cannot compile it (${messageOf(error)})`);
    return undefined;
  }
  return {
    json: record,
    schema,
    async check(value, at) {
      const found = compiled(value, at);
      return found.length === 0 ? { ok: true, value } : { ok: false, message: found.join('; ') };
    },
  };
}

function toDefinition(name: string, source: Tool, input: ReadSchema, output: ReadSchema | undefined): ToolDefinition<JsonObject, JsonValue> {
  const execute = source.execute!;
  const enforced = output === undefined ? undefined : downConvertToSubset(output.json);
  const definition: ToolDefinition<JsonObject, JsonValue> = {
    name,
    // A description computed from a per-call context has no single text: the name stands in.
    description: (typeof source.description === 'string' ? source.description.trim() : '') || `The AI SDK tool "${name}".`,
    parameters: input.json as JsonSchemaNode,
    // The tool's own schema checks its input (below), with every constraint it has.
    validateArguments: false,
    output: {
      // No output schema: any JSON, which the model reads as JSON text.
      schema: enforced ?? {},
      render: (_args, value) => renderJson(value),
      ...(output !== undefined && enforced === undefined ? { unvalidatedSchema: output.json as JsonSchemaNode } : {}),
    },
    async execute(args, exec) {
      // The tool's own schema parses too (zod defaults and transforms), as the AI SDK would.
      const parsed = await input.check(args, 'arguments');
      if (!parsed.ok) throw new PtcError('INVALID_ARGS', `arguments of tool ${JSON.stringify(name)} do not match its schema: ${parsed.message}`);
      let value: unknown = await execute(parsed.value, { toolCallId: exec.callId, messages: [], abortSignal: exec.signal, context: undefined as never });
      if (isAsyncIterable(value)) {
        // A streaming tool: its last value is its result, as for the AI SDK.
        let last: unknown;
        for await (const part of value) last = part;
        value = last;
      }
      if (output !== undefined) {
        const checked = await output.check(value, 'value');
        if (!checked.ok) throw new PtcError('INVALID_TOOL_OUTPUT', `the value of tool ${JSON.stringify(name)} does not match its schema: ${checked.message}`);
        value = checked.value;
      }
      return value as JsonValue;
    },
  };
  // A tool that needs approval in the AI SDK needs it inside a program too: the run pauses there.
  const needsApproval = source.needsApproval;
  if (needsApproval === true) definition.needsApproval = true;
  else if (typeof needsApproval === 'function') {
    definition.needsApproval = async (args, call) => (await needsApproval(args, { toolCallId: call.callId, messages: [], context: undefined as never })) === true;
  }
  return definition;
}

/** Standard Schema issues as `path: message`, one per issue. */
function issuesOf(error: unknown, root: string): string {
  const issues = (error as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(issues)) return messageOf(error);
  return issues
    .slice(0, 8)
    .map((issue: { path?: unknown; message?: unknown }) => {
      const path = Array.isArray(issue.path) ? issue.path.map((key) => (typeof key === 'object' && key !== null ? String((key as { key?: unknown }).key) : String(key))) : [];
      return `${[root, ...path].join('.')}: ${typeof issue.message === 'string' ? issue.message : 'invalid'}`;
    })
    .join('; ');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

function renderJson(value: JsonValue): ContentBlock[] {
  return [{ type: 'text', text: JSON.stringify(value, null, 2) }];
}
