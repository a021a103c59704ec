/**
 * Existing AI SDK tools as canonical definitions, so a program can call them
 * from run_code. Each keeps its key as its name. Input schemas (zod or JSON
 * Schema) go through the raw-subset check; an output schema, when given, is
 * enforced on the value; without one the value is any JSON, rendered as
 * JSON text. A tool's `needsApproval` carries over: a program's call pauses its run.
 */
import { asSchema, type Schema, type Tool } from 'ai';
import type { ContentBlock } from '../../src/content.ts';
import { PtcError } from '../../src/errors.ts';
import type { JsonObject, JsonValue } from '../../src/json.ts';
import { SchemaError } from '../../src/schema/schema-error.ts';
import { checkSchemaSubset, normalizeRawSchema } from '../../src/schema/subset.ts';
import type { JsonSchemaNode } from '../../src/schema/types.ts';
import type { AnyToolDefinition, ToolDefinition } from '../../src/tool.ts';

/**
 * One definition per tool, to `register` on a registry. Throws a
 * `SchemaError` listing every violation of every tool when any schema is
 * outside the raw subset (or a tool has no `execute`): nothing is half-converted.
 */
export function fromAiSdkTools(tools: Record<string, Tool>): AnyToolDefinition[] {
  const violations: string[] = [];
  const definitions: AnyToolDefinition[] = [];
  for (const [name, source] of Object.entries(tools)) {
    const before = violations.length;
    if (typeof source.execute !== 'function') violations.push(`${name}: has no execute function; only tools this process runs can be called from a program`);
    const input = readSchema(source.inputSchema, `${name}.inputSchema`, violations);
    const output = source.outputSchema === undefined ? undefined : readSchema(source.outputSchema, `${name}.outputSchema`, violations);
    if (input !== undefined && input.node.type !== 'object') violations.push(`${name}.inputSchema: must be an object schema (the arguments are one JSON object)`);
    if (violations.length > before || input === undefined) continue;
    definitions.push(toDefinition(name, source, input, output) as unknown as AnyToolDefinition);
  }
  if (violations.length > 0) throw new SchemaError(violations);
  return definitions;
}

interface ReadSchema {
  node: JsonSchemaNode;
  schema: Schema<unknown>;
}

function readSchema(flexible: unknown, root: string, violations: string[]): ReadSchema | undefined {
  let schema: Schema<unknown>;
  let json: unknown;
  try {
    schema = asSchema(flexible as Parameters<typeof asSchema>[0]);
    json = schema.jsonSchema;
  } catch (error) {
    violations.push(`${root}: could not be read as a schema (${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  }
  if (typeof (json as { then?: unknown } | null)?.then === 'function') {
    violations.push(`${root}: resolves asynchronously; pass a schema whose JSON Schema is known at once (zod, or jsonSchema({...}))`);
    return undefined;
  }
  const found = checkSchemaSubset(json, { allowRootDecorations: true, root });
  if (found.length > 0) {
    violations.push(...found);
    return undefined;
  }
  return { node: normalizeRawSchema(json, { root }), schema };
}

function toDefinition(name: string, source: Tool, input: ReadSchema, output: ReadSchema | undefined): ToolDefinition<JsonObject, JsonValue> {
  const execute = source.execute!;
  const definition: ToolDefinition<JsonObject, JsonValue> = {
    name,
    // A description computed from a per-call context has no single text: the name stands in.
    description: (typeof source.description === 'string' ? source.description.trim() : '') || `The AI SDK tool "${name}".`,
    parameters: input.node,
    validateArguments: true,
    output: {
      // No output schema: any JSON, which the model reads as JSON text.
      schema: output?.node ?? {},
      render: (_args, value) => renderJson(value),
    },
    async execute(args, exec) {
      // The tool's own schema parses too (zod defaults and transforms), as the AI SDK would.
      const parsed = await parse(input.schema, args, `arguments of tool ${JSON.stringify(name)}`);
      let value: unknown = await execute(parsed, { toolCallId: exec.callId, messages: [], abortSignal: exec.signal, context: undefined as never });
      if (isAsyncIterable(value)) {
        // A streaming tool: its last value is its result, as for the AI SDK.
        let last: unknown;
        for await (const part of value) last = part;
        value = last;
      }
      if (output !== undefined) value = await parse(output.schema, value, `the value of tool ${JSON.stringify(name)}`);
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

async function parse(schema: Schema<unknown>, value: unknown, what: string): Promise<unknown> {
  if (schema.validate === undefined) return value;
  const result = await schema.validate(value);
  if (result.success) return result.value;
  const code = what.startsWith('arguments') ? 'INVALID_ARGS' : 'INVALID_TOOL_OUTPUT';
  throw new PtcError(code, `${what} do not match its schema: ${result.error.message}`);
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

function renderJson(value: JsonValue): ContentBlock[] {
  return [{ type: 'text', text: JSON.stringify(value, null, 2) }];
}
