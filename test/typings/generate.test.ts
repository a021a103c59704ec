import { describe, expect, it } from 'vitest';
import { generateTypings } from '../../typings/generate.ts';
import type { ToolSchema } from '../../src/tool.ts';
import { SMALL_TOOLS } from './fixtures.ts';

// The exact output for SMALL_TOOLS: this is the format the model reads.
const EXPECTED = [
  'type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };',
  'type JsonObject = { [key: string]: JsonValue };',
  '/** JSON no schema checked: test its shape before use. */',
  'type UnvalidatedJson = JsonValue;',
  'interface ToolArgsMap {',
  '  /** Fetch a URL (from an MCP server). */',
  '  mcp_fetch: ({ url: string } & JsonObject)',
  '  /** Exotic name, closed arguments. */',
  '  "my-tool": { mode: ("fast" | "slow"); tags?: string[]; value?: (string | null); kind?: "x"; options?: ({ deep?: boolean } & JsonObject) }',
  '  /** Read a text file. */',
  '  read: ({ /** Workspace-relative path. */ path: string; /** First line, 1-based. @default 1 */ offset?: number } & JsonObject)',
  '}',
  '/** Values are deep-frozen. */',
  'interface ToolOutputMap {',
  "  /** Output NOT validated (its outputSchema could not be enforced): check structuredContent's shape first. */",
  '  mcp_fetch: { content: JsonValue[]; /** Unvalidated: the server advertised an outputSchema outside the supported subset. */ structuredContent?: UnvalidatedJson }',
  '  /** Any JSON. */',
  '  "my-tool": JsonValue',
  '  read: { text: string; lines: number }',
  '}',
  'type ToolName = keyof ToolArgsMap;',
  '/** A failed call rejects with this. */',
  'declare class ToolCallError extends Error {',
  '  readonly name: "ToolCallError";',
  '  readonly toolName: string;',
  '  readonly code: "UNKNOWN_TOOL" | "INVALID_ARGS" | "INVALID_TOOL_OUTPUT" | "ABORTED" | "ABORTED_BEFORE_DISPATCH" | "TOOL_TIMEOUT" | "BLOCKED" | "TOOL_FAILED" | "APPROVAL_DENIED" | `HTTP_${number}`;',
  '  readonly callId: string;',
  '}',
  'type Tools = { readonly [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]> };',
  'declare const tools: Tools;',
  '',
].join('\n');

describe('generateTypings', () => {
  it('renders a small tool set exactly', async () => {
    expect(await generateTypings(SMALL_TOOLS)).toBe(EXPECTED);
  });

  it('is byte-stable whatever the order of the tools', async () => {
    const reversed = await generateTypings([...SMALL_TOOLS].reverse());
    const rotated = await generateTypings([SMALL_TOOLS[1], SMALL_TOOLS[2], SMALL_TOOLS[0]]);
    expect(reversed).toBe(EXPECTED);
    expect(rotated).toBe(EXPECTED);
  });

  it('keeps one tool of a duplicated name, the same one whatever the order', async () => {
    const a: ToolSchema = { ...SMALL_TOOLS[0], description: 'First.' };
    const b: ToolSchema = { ...SMALL_TOOLS[0], description: 'Second.' };
    const ab = await generateTypings([a, b]);
    expect(await generateTypings([b, a])).toBe(ab);
    expect(ab.match(/^ {2}\/\*\* (First|Second)\. \*\/$/gm)).toHaveLength(1);
  });

  it('quotes exotic names and keeps __proto__ and hasOwnProperty as ordinary keys', async () => {
    const properties = JSON.parse('{"__proto__": {"type": "string"}, "hasOwnProperty": {"type": "number"}, "a b": {"type": "null"}}');
    const tools = ['__proto__', 'hasOwnProperty', 'with space', 'ünïcode'].map(
      (name): ToolSchema => ({
        name,
        description: `The ${name} tool.`,
        parameters: { type: 'object', additionalProperties: false, properties, required: ['hasOwnProperty'] },
        output: { type: 'null' },
      }),
    );
    const typings = await generateTypings(tools);
    const members = '{ "__proto__"?: string; hasOwnProperty: number; "a b"?: null }';
    expect(typings).toContain(`  /** The __proto__ tool. */\n  "__proto__": ${members}\n`);
    expect(typings).toContain(`  /** The hasOwnProperty tool. */\n  hasOwnProperty: ${members}\n`);
    expect(typings).toContain(`  /** The with space tool. */\n  "with space": ${members}\n`);
    expect(typings).toContain('  "ünïcode": null');
  });

  it('spends the node budget of a tool set in name order, so input order still never shows', async () => {
    const limits = { maxTotalNodes: 12 };
    const forward = await generateTypings(SMALL_TOOLS, { limits });
    expect(await generateTypings([...SMALL_TOOLS].reverse(), { limits })).toBe(forward);
    expect(forward).toContain('  read: JsonValue\n');
  });

  it('renders an empty tool set', async () => {
    const typings = await generateTypings([]);
    expect(typings).toContain('interface ToolArgsMap {}\n');
    expect(typings).toContain('interface ToolOutputMap {}\n');
    expect(typings).toContain('declare const tools: Tools;\n');
  });

  it('says so on the output entry when an MCP output schema was not enforced', async () => {
    const typings = await generateTypings(SMALL_TOOLS);
    const outputs = typings.slice(typings.indexOf('interface ToolOutputMap'));
    expect(outputs).toContain("  /** Output NOT validated (its outputSchema could not be enforced): check structuredContent's shape first. */\n  mcp_fetch: {");
    expect(typings.match(/NOT validated/g)).toHaveLength(1);
  });
});
