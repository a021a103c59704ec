/**
 * `generateTypings`: tool schemas → the `.d.ts` the model is shown (DESIGN §7).
 * Each tool's argument and output types are rendered by json-schema-to-typescript;
 * this file only assembles them, sorted by tool name, under a fixed header.
 */
import { createHash } from 'node:crypto';
import type { ToolSchema } from '../src/tool.ts';
import { CALL_ERROR_CODE_LIST } from './call-error-codes.ts';
import { compileMember, type MapName } from './compile-member.ts';
import type { LruCache } from './lru.ts';
import { prepareTools, type PreparedTool } from './prepare.ts';
import { DEFAULT_SCHEMA_LIMITS, type SafeNode, type SchemaLimits } from './safe-schema.ts';
import { indent, jsdoc, propertyKey } from './text.ts';

export interface GenerateOptions {
  /** Bounds applied to every schema before rendering; see {@link SchemaLimits} for defaults. */
  limits?: Partial<SchemaLimits>;
  /** Rendered members by content hash, reused across calls (a service keeps one). Default: none. */
  memberCache?: LruCache<string, string>;
}

export const TYPINGS_HEADER = '// Tool typings: generated from the tool schemas by ptc-executor — do not edit.';

const UNVALIDATED_NOTE =
  'Warning: this tool\'s output is NOT validated: its server\'s outputSchema could not be enforced,\n' +
  'so `structuredContent` may be any JSON. Check its shape before you rely on it.';

const UNVALIDATED_ALIAS = [
  '/** JSON that no schema checked (an MCP outputSchema we could not enforce): test its shape before you use it. */',
  'type UnvalidatedJson = JsonValue;',
];

/** Byte-stable typings for `schemas`, sorted by tool name. Never throws on hostile schemas; never reads files or the network. */
export async function generateTypings(schemas: readonly ToolSchema[], options: GenerateOptions = {}): Promise<string> {
  const limits = { ...DEFAULT_SCHEMA_LIMITS, ...options.limits };
  return renderTypings(prepareTools(schemas, limits), options.memberCache);
}

/** The typings of already prepared tools (see `prepareTools`). */
export async function renderTypings(tools: readonly PreparedTool[], memberCache?: LruCache<string, string>): Promise<string> {
  const args = await Promise.all(tools.map((tool) => member(tool.name, tool.args, 'ToolArgsMap', memberCache)));
  const outputs = await Promise.all(tools.map((tool) => member(tool.name, tool.output, 'ToolOutputMap', memberCache)));
  return [
    TYPINGS_HEADER,
    '',
    '/** Any lossless JSON value. */',
    'type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };',
    '/** An object that may carry extra JSON keys besides the ones listed. */',
    'type JsonObject = { [key: string]: JsonValue };',
    ...(tools.some((tool) => tool.unvalidatedOutput) ? UNVALIDATED_ALIAS : []),
    '',
    '/** The one argument object of each tool, by tool name. */',
    mapDeclaration('ToolArgsMap', args),
    '',
    '/** What each tool resolves to, by tool name: canonical JSON, deep-frozen. */',
    mapDeclaration('ToolOutputMap', outputs),
    '',
    'type ToolName = keyof ToolArgsMap;',
    '',
    toolCallErrorDeclaration(),
    '',
    toolsDeclaration(tools),
    '',
  ].join('\n');
}

async function member(name: string, node: SafeNode, map: MapName, cache: LruCache<string, string> | undefined): Promise<string> {
  const key = cache && createHash('sha256').update(JSON.stringify([map, name, node])).digest('hex');
  const cached = key === undefined ? undefined : cache?.get(key);
  if (cached !== undefined) return cached;
  const text = indent(await compileMember(name, node, map), 1);
  if (key !== undefined) cache?.set(key, text);
  return text;
}

function mapDeclaration(map: MapName, members: readonly string[]): string {
  return members.length === 0 ? `interface ${map} {}` : [`interface ${map} {`, ...members, '}'].join('\n');
}

function toolCallErrorDeclaration(): string {
  return [
    '/** A failed tool call rejects with a ToolCallError; catch it to recover. */',
    'declare class ToolCallError extends Error {',
    '  readonly name: "ToolCallError";',
    '  /** The name the program called (a ToolName, or a misspelt one for UNKNOWN_TOOL). */',
    '  readonly toolName: string;',
    `  readonly code: ${CALL_ERROR_CODE_LIST.map((code) => JSON.stringify(code)).join(' | ')};`,
    '  /** Identifies the failed call in the run\'s event log. */',
    '  readonly callId: string;',
    '}',
  ].join('\n');
}

function toolsDeclaration(tools: readonly PreparedTool[]): string {
  const members = tools.map((tool) => {
    const notes = [tool.description, tool.unvalidatedOutput ? UNVALIDATED_NOTE : undefined].filter((n) => n !== undefined);
    const doc = notes.length === 0 ? [] : [jsdoc(notes.join('\n\n'), '  ')];
    const name = JSON.stringify(tool.name);
    return [...doc, `  readonly ${propertyKey(tool.name)}: (args: ToolArgsMap[${name}]) => Promise<ToolOutputMap[${name}]>;`].join('\n');
  });
  const head = '/** The tools, one async function each: `await tools.name(args)`. */';
  return members.length === 0 ? `${head}\ndeclare const tools: {};` : [head, 'declare const tools: {', ...members, '};'].join('\n');
}
