/**
 * Tool schemas of any provenance → sanitised, sorted, de-duplicated tools,
 * and the fingerprint the typings caches are keyed by. Never throws.
 */
import { createHash } from 'node:crypto';
import { MCP_CONTENT_SCHEMA } from '../src/mcp/content-schema.ts';
import type { ToolSchema } from '../src/tool.ts';
import { DEFAULT_SCHEMA_LIMITS, sanitizeSchema, totalBudget, type SafeNode, type SchemaLimits, type SharedBudget } from './safe-schema.ts';
import { cleanDescription } from './text.ts';

export interface PreparedTool {
  name: string;
  description?: string;
  args: SafeNode;
  output: SafeNode;
  /** An MCP tool whose advertised outputSchema could not be enforced (it is typed `UnvalidatedJson`). */
  unvalidatedOutput: boolean;
  /** A tool typed from a declared output schema that is not enforced (`ToolSchema.unvalidatedOutput`). */
  declaredOutput?: true;
  /** An MCP tool: its `content` is typed `McpContentBlock[]` (declared once in the typings). */
  mcpContent?: true;
}

/** In front of the description of a tool whose calls may wait for a person's approval. */
export const MAY_PAUSE_NOTE = "[needs approval: a call may pause the run until a person decides; a denial throws APPROVAL_DENIED]";

/** The MCP bridge marks an unenforced outputSchema by this description prefix on `structuredContent`. */
const UNVALIDATED_PREFIX = 'Unvalidated';

/**
 * Sorted by name (UTF-16 code units, locale-free). Entries that are not tool
 * schemas are skipped; of two tools with one name the one whose sanitised
 * form sorts first is kept. Tools are sanitised in name order, so the shared
 * node budget, like everything else, never depends on input order.
 */
export function prepareTools(schemas: readonly ToolSchema[] | unknown, limits: SchemaLimits = DEFAULT_SCHEMA_LIMITS): PreparedTool[] {
  const entries: { name: string; entry: object }[] = [];
  for (const entry of Array.isArray(schemas) ? (schemas as unknown[]) : []) {
    const name = nameOf(entry);
    if (name !== undefined) entries.push({ name, entry: entry as object });
  }
  entries.sort((a, b) => compare(a.name, b.name));

  const budget = totalBudget(limits);
  const tools: PreparedTool[] = [];
  for (let i = 0; i < entries.length; ) {
    const name = entries[i].name;
    let best: { tool: PreparedTool; key: string; left: number } | undefined;
    for (; i < entries.length && entries[i].name === name; i++) {
      const spend = { total: budget.total };
      const tool = prepareTool(name, entries[i].entry, limits, spend);
      if (tool === undefined) continue;
      const key = JSON.stringify(tool);
      if (best === undefined || key < best.key) best = { tool, key, left: spend.total };
    }
    if (best !== undefined) {
      tools.push(best.tool);
      budget.total = best.left;
    }
  }
  return tools;
}

/** sha256 of the canonical JSON of the prepared tools: equal exactly when the typings are. */
export function fingerprint(tools: readonly PreparedTool[]): string {
  return createHash('sha256').update(JSON.stringify(tools)).digest('hex');
}

function nameOf(entry: unknown): string | undefined {
  try {
    if (typeof entry !== 'object' || entry === null) return undefined;
    const name = (entry as Record<string, unknown>).name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

function prepareTool(name: string, entry: object, limits: SchemaLimits, budget: SharedBudget): PreparedTool | undefined {
  try {
    const { description, parameters, output, unvalidatedOutput: declared, mayPause } = entry as Record<string, unknown>;
    const cleaned = typeof description === 'string' ? cleanDescription(description, limits) : undefined;
    // Written by the host (the registry, an approval rule), never by a schema's author.
    const text = mayPause === true ? (cleaned === undefined ? MAY_PAUSE_NOTE : `${MAY_PAUSE_NOTE} ${cleaned}`) : cleaned;
    const unvalidatedOutput = isUnvalidated(output);
    const args = sanitizeSchema(parameters, limits, budget);
    if (declared !== undefined) {
      return {
        name,
        ...(text === undefined ? {} : { description: text }),
        args,
        output: sanitizeSchema(declared, limits, budget),
        unvalidatedOutput: false,
        declaredOutput: true,
      };
    }
    const mcpContent = hasMcpContent(output);
    const safeOutput = sanitizeSchema(output, limits, budget);
    if (mcpContent) safeOutput.properties!.content = { tsType: 'McpContentBlock[]' };
    return {
      name,
      ...(text === undefined ? {} : { description: text }),
      args,
      output: unvalidatedOutput ? markUnvalidated(safeOutput) : safeOutput,
      unvalidatedOutput,
      ...(mcpContent ? { mcpContent: true as const } : {}),
    };
  } catch {
    return undefined;
  }
}

/** The unchecked `structuredContent` typed `UnvalidatedJson`, so the type itself says so. */
function markUnvalidated(output: SafeNode): SafeNode {
  const properties = output.properties ?? output.allOf?.[0]?.properties;
  const node = properties !== undefined && Object.hasOwn(properties, 'structuredContent') ? properties.structuredContent : undefined;
  if (node?.tsType === 'JsonValue') properties!.structuredContent = { ...node, tsType: 'UnvalidatedJson' };
  return output;
}

const MCP_CONTENT_JSON = JSON.stringify(MCP_CONTENT_SCHEMA);

/** The MCP bridge's output: `content` is exactly its content-block schema (and the sanitised node keeps it as a property). */
function hasMcpContent(output: unknown): boolean {
  const content = field(field(output, 'properties'), 'content');
  return content !== undefined && field(output, 'additionalProperties') === false && JSON.stringify(content) === MCP_CONTENT_JSON;
}

function isUnvalidated(output: unknown): boolean {
  const properties = field(output, 'properties');
  const description = field(field(properties, 'structuredContent'), 'description');
  return typeof description === 'string' && description.startsWith(UNVALIDATED_PREFIX);
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
