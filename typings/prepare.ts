/**
 * Tool schemas of any provenance → sanitised, sorted, de-duplicated tools,
 * and the fingerprint the typings caches are keyed by. Never throws.
 */
import { createHash } from 'node:crypto';
import type { ToolSchema } from '../src/tool.ts';
import { DEFAULT_SCHEMA_LIMITS, sanitizeSchema, type SafeNode, type SchemaLimits } from './safe-schema.ts';
import { cleanDescription } from './text.ts';

export interface PreparedTool {
  name: string;
  description?: string;
  args: SafeNode;
  output: SafeNode;
  /** An MCP tool whose advertised outputSchema could not be enforced (DESIGN §8). */
  unvalidatedOutput: boolean;
}

/** The MCP bridge marks an unenforced outputSchema by this description prefix on `structuredContent`. */
const UNVALIDATED_PREFIX = 'Unvalidated';

/**
 * Sorted by name (UTF-16 code units, locale-free). Entries that are not tool
 * schemas are skipped; of two tools with one name the one whose sanitised
 * form sorts first is kept, so input order never shows.
 */
export function prepareTools(schemas: readonly ToolSchema[] | unknown, limits: SchemaLimits = DEFAULT_SCHEMA_LIMITS): PreparedTool[] {
  const list: unknown[] = Array.isArray(schemas) ? schemas : [];
  const tools: { tool: PreparedTool; key: string }[] = [];
  for (const entry of list) {
    const tool = prepareTool(entry, limits);
    if (tool !== undefined) tools.push({ tool, key: JSON.stringify(tool) });
  }
  tools.sort((a, b) => compare(a.tool.name, b.tool.name) || compare(a.key, b.key));
  return tools.filter((t, i) => i === 0 || tools[i - 1].tool.name !== t.tool.name).map((t) => t.tool);
}

/** sha256 of the canonical JSON of the prepared tools: equal exactly when the typings are. */
export function fingerprint(tools: readonly PreparedTool[]): string {
  return createHash('sha256').update(JSON.stringify(tools)).digest('hex');
}

function prepareTool(entry: unknown, limits: SchemaLimits): PreparedTool | undefined {
  try {
    if (typeof entry !== 'object' || entry === null) return undefined;
    const { name, description, parameters, output } = entry as Record<string, unknown>;
    if (typeof name !== 'string') return undefined;
    const text = typeof description === 'string' ? cleanDescription(description, limits) : undefined;
    return {
      name,
      ...(text === undefined ? {} : { description: text }),
      args: sanitizeSchema(parameters, limits),
      output: sanitizeSchema(output, limits),
      unvalidatedOutput: isUnvalidated(output),
    };
  } catch {
    return undefined;
  }
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
