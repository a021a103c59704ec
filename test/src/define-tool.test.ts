import { describe, expect, expectTypeOf, it } from 'vitest';
import { textContent, type ContentBlock } from '../../src/content.ts';
import { defineTool } from '../../src/define-tool.ts';
import type { FrozenJson, JsonValue } from '../../src/json.ts';
import { SchemaError } from '../../src/schema/schema-error.ts';
import { createToolRegistry } from '../../src/registry.ts';
import { checkSchemaSubset } from '../../src/schema/subset.ts';
import type { ToolDefinition, ToolExec } from '../../src/tool.ts';

function readSpec() {
  return {
    name: 'read',
    description: 'Read a text file.',
    parameters: {
      path: { type: 'string', required: true, description: 'file path' },
      offset: { type: 'integer' },
    },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          path: { type: 'string', required: true },
          lines: { type: 'array', required: true, items: { type: 'string' } },
        },
      },
      render: (_args: unknown, value: { readonly lines: readonly string[] }): ContentBlock[] => textContent(value.lines.join('\n')),
    },
    execute: async (args: { readonly path: string }) => ({ path: args.path, lines: ['a', 'b'] }),
  } as const;
}

describe('defineTool', () => {
  it('returns an ordinary definition with compiled raw schemas and validateArguments: true', async () => {
    const tool = defineTool(readSpec());
    expect(tool.name).toBe('read');
    expect(tool.description).toBe('Read a text file.');
    expect(tool.validateArguments).toBe(true);
    expect(tool.parameters).toStrictEqual({
      type: 'object',
      properties: { path: { type: 'string', description: 'file path' }, offset: { type: 'integer' } },
      required: ['path'],
      additionalProperties: true,
    });
    expect(tool.output.schema).toStrictEqual({
      type: 'object',
      properties: { path: { type: 'string' }, lines: { type: 'array', items: { type: 'string' } } },
      required: ['path', 'lines'],
      additionalProperties: false,
    });
    expect(checkSchemaSubset(tool.parameters)).toEqual([]);
    expect(checkSchemaSubset(tool.output.schema)).toEqual([]);
    expect('timeoutMs' in tool).toBe(false);
    expect('presentationMeta' in tool.output).toBe(false);
    expect('isConcurrencySafe' in tool).toBe(false);
    const exec = {} as ToolExec<{ readonly path: string }>;
    expect(await tool.execute({ path: 'x' }, exec)).toEqual({ path: 'x', lines: ['a', 'b'] });
    expect(tool.output.render({ path: 'x' }, { path: 'x', lines: ['a', 'b'] })).toEqual(textContent('a\nb'));
  });

  it('never mutates the spec, and freezes what it returns', () => {
    const spec = readSpec();
    const before = JSON.stringify(spec);
    const tool = defineTool(spec);
    expect(JSON.stringify(spec)).toBe(before);
    expect(Object.isFrozen(spec.parameters)).toBe(false);
    expect(Object.isFrozen(spec.output.schema)).toBe(false);
    expect(Object.isFrozen(tool)).toBe(true);
    expect(Object.isFrozen(tool.output)).toBe(true);
    expect(Object.isFrozen(tool.parameters)).toBe(true);
    expect(tool.parameters).not.toBe(spec.parameters);
  });

  it('keeps optional callbacks and timeoutMs, calling them with the spec as this', () => {
    const spec = {
      ...readSpec(),
      output: {
        ...readSpec().output,
        presentationMeta(this: { tag: string }, args: { readonly path: string }): JsonValue {
          return { tag: this.tag, path: args.path };
        },
        tag: 'card',
      },
      isConcurrencySafe: () => true,
      timeoutMs: 1_000,
    };
    const tool = defineTool(spec);
    expect(tool.timeoutMs).toBe(1_000);
    expect(tool.isConcurrencySafe?.({ path: 'p' })).toBe(true);
    expect(tool.output.presentationMeta?.({ path: 'p' }, { path: 'p', lines: [] })).toEqual({ tag: 'card', path: 'p' });
  });

  it('lists every violation of both schemas in one SchemaError', () => {
    let error: unknown;
    try {
      defineTool({
        name: 'bad',
        description: 'x',
        parameters: { a: { type: 'object', properties: {} } as never, b: { type: ['string'] } as never },
        output: { schema: { type: 'string', format: 'uri' } as never, render: () => [] },
        execute: async () => 'x' as never,
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SchemaError);
    expect((error as SchemaError).violations).toEqual([
      expect.stringMatching(/^parameters\.a: an explicit object needs `additionalProperties/),
      expect.stringMatching(/^parameters\.b: `type` arrays are not supported/),
      expect.stringMatching(/^output\.schema: `format` is not supported/),
    ]);
    expect((error as SchemaError).message).toContain('"bad"');
  });

  it('refuses a definition without output, or with callbacks that are not functions', () => {
    const { output: _output, ...noOutput } = readSpec();
    expect(() => defineTool(noOutput as never)).toThrow(/output: is missing/);
    expect(() => defineTool({ ...readSpec(), execute: 'nope' } as never)).toThrow(/execute: must be an async function/);
    expect(() => defineTool({ ...readSpec(), timeoutMs: -1 } as never)).toThrow(/timeoutMs: must be a positive/);
  });

  it.each([1.5, 1e12, -1, Number.NaN])('refuses timeoutMs %s exactly as register does (one rule set)', (timeoutMs) => {
    const problem = /timeoutMs: must be a positive whole number of milliseconds up to 2147483647/;
    expect(() => defineTool({ ...readSpec(), timeoutMs })).toThrow(problem);
    const { timeoutMs: _omitted, ...accepted } = defineTool(readSpec());
    expect(() => createToolRegistry().register({ ...accepted, timeoutMs } as never)).toThrow(problem);
  });

  it('types execute and render from the schemas', () => {
    const tool = defineTool({
      name: 'mode',
      description: 'x',
      parameters: { mode: { type: 'string', enum: ['a', 'b'], required: true }, n: { type: 'number' } },
      output: {
        schema: { oneOf: [{ type: 'string' }, { type: 'null' }] },
        render(args, value) {
          expectTypeOf(args).toEqualTypeOf<FrozenJson<{ mode: 'a' | 'b'; n?: number }>>();
          expectTypeOf(value).toEqualTypeOf<string | null>();
          return textContent(String(value));
        },
      },
      async execute(args, exec) {
        expectTypeOf(args.mode).toEqualTypeOf<'a' | 'b'>();
        expectTypeOf(exec.arguments).toEqualTypeOf(args);
        return args.mode === 'a' ? 'x' : null;
      },
    });
    expectTypeOf(tool).toEqualTypeOf<ToolDefinition<FrozenJson<{ mode: 'a' | 'b'; n?: number }>, string | null>>();
    expect(tool.name).toBe('mode');
  });
});
