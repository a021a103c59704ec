import { describe, expect, it } from 'vitest';
import { generateTypings } from '../../typings/generate.ts';
import type { ToolSchema } from '../../src/tool.ts';
import { SMALL_TOOLS } from './fixtures.ts';

// The exact output for SMALL_TOOLS: this is the format the model reads.
const EXPECTED = [
  '// Tool typings: generated from the tool schemas by ptc-executor — do not edit.',
  '',
  '/** Any lossless JSON value. */',
  'type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };',
  '/** An object that may carry extra JSON keys besides the ones listed. */',
  'type JsonObject = { [key: string]: JsonValue };',
  '/** JSON that no schema checked (an MCP outputSchema we could not enforce): test its shape before you use it. */',
  'type UnvalidatedJson = JsonValue;',
  '',
  '/** The one argument object of each tool, by tool name. */',
  'interface ToolArgsMap {',
  '  mcp_fetch: ({',
  '    url: string',
  '  } & JsonObject)',
  '  "my-tool": {',
  '    mode: ("fast" | "slow")',
  '    tags?: string[]',
  '    value?: (string | null)',
  '    kind?: "x"',
  '    options?: ({',
  '      deep?: boolean',
  '    } & JsonObject)',
  '  }',
  '  read: ({',
  '    /**',
  '     * Workspace-relative path.',
  '     */',
  '    path: string',
  '    /**',
  '     * First line, 1-based.',
  '     * @default 1',
  '     */',
  '    offset?: number',
  '  } & JsonObject)',
  '}',
  '',
  '/** What each tool resolves to, by tool name: canonical JSON, deep-frozen. */',
  'interface ToolOutputMap {',
  '  mcp_fetch: {',
  '    content: JsonValue[]',
  '    /**',
  '     * Unvalidated: the server advertised an outputSchema outside the supported subset.',
  '     */',
  '    structuredContent?: UnvalidatedJson',
  '  }',
  '  /**',
  '   * Any JSON.',
  '   */',
  '  "my-tool": JsonValue',
  '  read: {',
  '    text: string',
  '    lines: number',
  '  }',
  '}',
  '',
  'type ToolName = keyof ToolArgsMap;',
  '',
  '/** A failed tool call rejects with a ToolCallError; catch it to recover. */',
  'declare class ToolCallError extends Error {',
  '  readonly name: "ToolCallError";',
  '  /** The name the program called (a ToolName, or a misspelt one for UNKNOWN_TOOL). */',
  '  readonly toolName: string;',
  '  readonly code: "UNKNOWN_TOOL" | "INVALID_ARGS" | "INVALID_TOOL_OUTPUT" | "ABORTED" | "ABORTED_BEFORE_DISPATCH" | "TOOL_TIMEOUT" | "BLOCKED" | "TOOL_FAILED";',
  '  /** Identifies the failed call in the run\'s event log. */',
  '  readonly callId: string;',
  '}',
  '',
  '/** The tools, one async function each: `await tools.name(args)`. */',
  'declare const tools: {',
  '  /**',
  '   * Fetch a URL (from an MCP server).',
  '   *',
  '   * Warning: this tool\'s output is NOT validated: its server\'s outputSchema could not be enforced,',
  '   * so `structuredContent` may be any JSON. Check its shape before you rely on it.',
  '   */',
  '  readonly mcp_fetch: (args: ToolArgsMap["mcp_fetch"]) => Promise<ToolOutputMap["mcp_fetch"]>;',
  '  /**',
  '   * Exotic name, closed arguments.',
  '   */',
  '  readonly "my-tool": (args: ToolArgsMap["my-tool"]) => Promise<ToolOutputMap["my-tool"]>;',
  '  /**',
  '   * Read a text file.',
  '   */',
  '  readonly read: (args: ToolArgsMap["read"]) => Promise<ToolOutputMap["read"]>;',
  '};',
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
    expect(ab.match(/readonly read:/g)).toHaveLength(1);
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
    expect(typings).toContain('  readonly "__proto__": (args: ToolArgsMap["__proto__"]) => Promise<ToolOutputMap["__proto__"]>;');
    expect(typings).toContain('  readonly hasOwnProperty: (args: ToolArgsMap["hasOwnProperty"])');
    expect(typings).toContain('  readonly "with space": (args: ToolArgsMap["with space"])');
    expect(typings).toContain('  readonly "ünïcode": (args');
    expect(typings).toContain(['  hasOwnProperty: {', '    "__proto__"?: string', '    hasOwnProperty: number', '    "a b"?: null', '  }'].join('\n'));
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
    expect(typings).toContain('declare const tools: {};\n');
  });

  it('says so in the tool JSDoc when an MCP output schema was not enforced', async () => {
    const typings = await generateTypings(SMALL_TOOLS);
    const doc = typings.slice(typings.indexOf('declare const tools'), typings.indexOf('readonly mcp_fetch'));
    expect(doc).toContain("Warning: this tool's output is NOT validated");
    expect(typings.match(/NOT validated/g)).toHaveLength(1);
  });
});
