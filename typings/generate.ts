/**
 * `generateTypings`: tool schemas → the `.d.ts` the model is shown.
 * Each tool's argument and output types are rendered by json-schema-to-typescript;
 * this file only assembles them, sorted by tool name, under a fixed header.
 */
import { createHash } from 'node:crypto';
import type { ToolSchema } from '../src/tool.ts';
import { CALL_ERROR_CODE_LIST, HTTP_CALL_ERROR_TYPE } from './call-error-codes.ts';
import { compileMember, type MapName } from './compile-member.ts';
import type { LruCache } from './lru.ts';
import { prepareTools, type PreparedTool } from './prepare.ts';
import { DEFAULT_SCHEMA_LIMITS, type SafeNode, type SchemaLimits } from './safe-schema.ts';
import { collapseBlocks, indent, singleLineDocs } from './text.ts';

export interface GenerateOptions {
  /** Bounds applied to every schema before rendering; see {@link SchemaLimits} for defaults. */
  limits?: Partial<SchemaLimits>;
  /** Rendered members by content hash, reused across calls (a service keeps one). Default: none. */
  memberCache?: LruCache<string, string>;
}

/**
 * Widest line a member block is folded onto (see `collapseBlocks`): short
 * objects read as one line, long documented ones keep a line per member.
 */
const FOLD_WIDTH = 200;

/** On the output entry of a tool whose MCP outputSchema could not be enforced. */
const UNVALIDATED_NOTE = 'Output NOT validated (its outputSchema could not be enforced): check structuredContent\'s shape first.';

const DECLARED_NOTE = "Output NOT validated (its declared schema could not be enforced): check the value's shape before relying on it.";
const MCP_CONTENT_ALIAS = [
  '/** One block of an MCP tool\'s `content`: narrow on `type` before reading its fields. */',
  'type McpContentBlock =',
  '  | { type: "text"; text: string }',
  '  | { type: "image"; /** base64 */ data: string; mimeType: string }',
  '  | { type: "audio"; /** base64 */ data: string; mimeType: string }',
  '  | { type: "resource_link"; uri: string; name: string; title?: string; description?: string; mimeType?: string }',
  '  | { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; /** base64 */ blob?: string } };',
];
const UNVALIDATED_ALIAS = ['/** JSON no schema checked: test its shape before use. */', 'type UnvalidatedJson = JsonValue;'];

/** Byte-stable typings for `schemas`, sorted by tool name. Never throws on hostile schemas; never reads files or the network. */
export async function generateTypings(schemas: readonly ToolSchema[], options: GenerateOptions = {}): Promise<string> {
  const limits = { ...DEFAULT_SCHEMA_LIMITS, ...options.limits };
  return renderTypings(prepareTools(schemas, limits), options.memberCache);
}

/** One tool's entries of `ToolArgsMap` and `ToolOutputMap` (its description on the first), indented one level. */
export interface ToolEntries {
  name: string;
  args: string;
  output: string;
}

/**
 * The typings of already prepared tools (see `prepareTools`). Compact, as the
 * model pays for every byte: one-line doc comments, each tool's description
 * once (on its `ToolArgsMap` entry), and `tools` as one mapped type.
 */
export async function renderTypings(
  tools: readonly PreparedTool[],
  memberCache?: LruCache<string, string>,
  /** The tools whose shared declarations (aliases) to include; default `tools` (search shows the rest's entries apart). */
  sharedWith: readonly PreparedTool[] = tools,
): Promise<string> {
  const entries = await renderEntries(tools, memberCache);
  return [
    'type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };',
    // `{…} & JsonObject` says "extra keys allowed" by itself; no comment needed.
    'type JsonObject = { [key: string]: JsonValue };',
    ...(sharedWith.some((tool) => tool.unvalidatedOutput) ? UNVALIDATED_ALIAS : []),
    ...(sharedWith.some((tool) => tool.mcpContent === true) ? MCP_CONTENT_ALIAS : []),
    // The comment on each entry describes its tool; the map itself needs none.
    mapDeclaration('ToolArgsMap', entries.map((entry) => entry.args)),
    '/** Values are deep-frozen. */',
    mapDeclaration('ToolOutputMap', entries.map((entry) => entry.output)),
    'type ToolName = keyof ToolArgsMap;',
    toolCallErrorDeclaration(),
    // A named type: a type-check error then says "on type 'Tools'", not the whole expanded catalogue.
    'type Tools = { readonly [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]> };',
    'declare const tools: Tools;',
    '',
  ].join('\n');
}

/** Each tool's map entries, in the order given (search results show a few tools this way). */
export async function renderEntries(tools: readonly PreparedTool[], memberCache?: LruCache<string, string>): Promise<ToolEntries[]> {
  return Promise.all(
    tools.map(async (tool) => ({
      name: tool.name,
      args: await member(tool.name, withDescription(tool.args, tool.description), 'ToolArgsMap', memberCache),
      output: await member(
        tool.name,
        tool.unvalidatedOutput
          ? withDescription(tool.output, UNVALIDATED_NOTE)
          : tool.declaredOutput === true
            ? withDescription(tool.output, DECLARED_NOTE)
            : tool.output,
        'ToolOutputMap',
        memberCache,
      ),
    })),
  );
}

/** A standalone `.d.ts` fragment for some tools: valid on its own, and merges with the whole typings (interfaces merge). */
export function entriesText(entries: readonly ToolEntries[]): string {
  return [mapDeclaration('ToolArgsMap', entries.map((e) => e.args)), mapDeclaration('ToolOutputMap', entries.map((e) => e.output)), ''].join('\n');
}

/** The node with `note` in front of its own description. */
function withDescription(node: SafeNode, note: string | undefined): SafeNode {
  if (note === undefined) return node;
  return { ...node, description: node.description === undefined ? note : `${note} ${node.description}` };
}

async function member(name: string, node: SafeNode, map: MapName, cache: LruCache<string, string> | undefined): Promise<string> {
  const key = cache && createHash('sha256').update(JSON.stringify([map, name, node])).digest('hex');
  const cached = key === undefined ? undefined : cache?.get(key);
  if (cached !== undefined) return cached;
  const text = indent(collapseBlocks(singleLineDocs(await compileMember(name, node, map)), FOLD_WIDTH), 1);
  if (key !== undefined) cache?.set(key, text);
  return text;
}

function mapDeclaration(map: MapName, members: readonly string[]): string {
  return members.length === 0 ? `interface ${map} {}` : [`interface ${map} {`, ...members, '}'].join('\n');
}

function toolCallErrorDeclaration(): string {
  return [
    '/** A failed call rejects with this. */',
    'declare class ToolCallError extends Error {',
    '  readonly name: "ToolCallError";',
    '  readonly toolName: string;',
    `  readonly code: ${[...CALL_ERROR_CODE_LIST.map((code) => JSON.stringify(code)), HTTP_CALL_ERROR_TYPE].join(' | ')};`,
    '  readonly callId: string;',
    '}',
  ].join('\n');
}
