/**
 * One MCP server tool as a raw canonical definition `<server>__<tool>`: its
 * inputSchema passed through, its outputSchema enforced on
 * `structuredContent` when it is inside the raw subset.
 */
import { CallToolResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ContentBlock } from '../content.ts';
import type { JsonObject } from '../json.ts';
import { checkSchemaSubset, normalizeRawSchema } from '../schema/subset.ts';
import type { JsonSchemaNode } from '../schema/types.ts';
import type { ToolDefinition } from '../tool.ts';
import { toolSourceChannel, traceWithin, type ToolSourceMessage } from '../tracing.ts';
import { MCP_CONTENT_SCHEMA } from './content-schema.ts';
import { flattenText, renderMcpValue, type McpToolValue } from './render.ts';

/** Sends `tools/call` for one tool, with `meta` as the request's `_meta` when given, and resolves to the server's unparsed result. */
export type McpCallTool = (toolName: string, args: JsonObject, signal: AbortSignal, meta?: Readonly<Record<string, string>>) => Promise<unknown>;

export interface McpToolOptions {
  server: string;
  tool: Tool;
  call: McpCallTool;
  /** Registry deadline for one call, in ms; `TOOL_TIMEOUT` when it passes. */
  timeoutMs: number;
}

/** How a server's outputSchema was taken: enforced, or why it could not be. */
export type McpOutputSchemaStatus = { kind: 'none' } | { kind: 'enforced' } | { kind: 'unvalidated'; reasons: string[] };

export function mcpToolName(server: string, tool: string): string {
  return `${server}__${tool}`;
}

export function createMcpToolDefinition(options: McpToolOptions): ToolDefinition<JsonObject, McpToolValue> {
  const { server, tool, call } = options;
  const name = mcpToolName(server, tool.name);
  const description = (tool.description ?? '').trim() || (tool.title ?? '').trim() || `Tool "${tool.name}" of the MCP server "${server}".`;
  const readOnly = tool.annotations?.readOnlyHint === true;
  return {
    name,
    description,
    parameters: tool.inputSchema as JsonSchemaNode,
    validateArguments: false,
    timeoutMs: options.timeoutMs,
    output: {
      schema: mcpOutputSchema(tool.outputSchema).schema,
      render: (_args, value) => renderMcpValue(name, value),
    },
    isConcurrencySafe: () => readOnly,
    async execute(args, exec) {
      let raw: unknown;
      if (!toolSourceChannel.hasSubscribers) raw = await call(tool.name, args, exec.signal);
      else {
        const message: ToolSourceMessage = { kind: 'mcp', callId: exec.callId, tool: name, server, operation: tool.name, carrier: {} };
        // The carrier is read after `start`: what a tracer put there travels as the call's `_meta`.
        raw = await traceWithin(toolSourceChannel, message, () => call(tool.name, args, exec.signal, message.carrier));
      }
      const parsed = CallToolResultSchema.safeParse(raw);
      if (!parsed.success) {
        const issues = parsed.error.issues
          .slice(0, 3)
          .map((issue) => `${['result', ...issue.path.map(String)].join('.')}: ${issue.message}`);
        throw new Error(
          `MCP server "${server}" sent a malformed result for "${tool.name}" (${issues.join('; ')}); a tool result must be {content: [...], structuredContent?: {...}, isError?: boolean}. Report it to the server's maintainers.`,
        );
      }
      const content = parsed.data.content as unknown as ContentBlock[];
      if (parsed.data.isError === true) {
        const text = flattenText(content).trim();
        throw new Error(text === '' ? `MCP tool "${tool.name}" of server "${server}" reported an error without any text.` : text);
      }
      const value: McpToolValue = { content };
      if (parsed.data.structuredContent !== undefined) value.structuredContent = parsed.data.structuredContent as JsonObject;
      return value;
    },
  };
}

const MAX_REASONS = 3;


/**
 * The output schema of a bridged tool: `{content, structuredContent?}`, with
 * the server's outputSchema at `structuredContent` when the raw subset can
 * enforce it (root `$schema`/`$id`/`$comment` are annotations), any JSON
 * otherwise, described as unvalidated.
 */
export function mcpOutputSchema(outputSchema: unknown): { schema: JsonSchemaNode; status: McpOutputSchemaStatus } {
  // No description: it would repeat in the typings of every bridged tool.
  const content = MCP_CONTENT_SCHEMA;
  const wrap = (structured: JsonSchemaNode, required: string[]): JsonSchemaNode => ({
    type: 'object',
    additionalProperties: false,
    properties: { content, structuredContent: structured },
    required,
  });
  if (outputSchema === undefined) {
    const status: McpOutputSchemaStatus = { kind: 'none' };
    return { schema: wrap({ description: 'Structured output, if the server sends any (it declares no outputSchema); any JSON.' }, ['content']), status };
  }
  const reasons = subsetViolations(outputSchema);
  if (reasons.length === 0) {
    return { schema: wrap(normalizeRawSchema(outputSchema), ['content', 'structuredContent']), status: { kind: 'enforced' } };
  }
  const shown =
    reasons.slice(0, MAX_REASONS).map(briefReason).join('; ') + (reasons.length > MAX_REASONS ? `; and ${reasons.length - MAX_REASONS} more` : '');
  return {
    schema: wrap({ description: `Unvalidated: the server's outputSchema is outside the supported subset (${shown}); any JSON.` }, ['content']),
    status: { kind: 'unvalidated', reasons },
  };
}

/** `path: what is wrong: how to fix` → `path: what is wrong` (the typings repeat it; the fix is for authors). */
function briefReason(reason: string): string {
  return reason.split(': ').slice(0, 2).join(': ');
}

function subsetViolations(outputSchema: unknown): string[] {
  try {
    return checkSchemaSubset(outputSchema, { allowRootDecorations: true, root: 'outputSchema' });
  } catch (error) {
    return [`it could not be checked: ${error instanceof Error ? error.message : String(error)}`];
  }
}
