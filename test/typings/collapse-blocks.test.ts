import { describe, expect, it } from 'vitest';
import { generateTypings } from '../../typings/generate.ts';
import { collapseBlocks } from '../../typings/text.ts';
import { tscErrors } from './tsc.ts';

describe('collapseBlocks', () => {
  it('folds nested member blocks from the inside out, doc comments inline', () => {
    const source = ['a: {', 'b: {', '/** Doc. */', 'c?: number', 'd: string', '}[]', 'e: ("x" | "y")', '}'].join('\n');
    expect(collapseBlocks(source, 200)).toBe('a: { b: { /** Doc. */ c?: number; d: string }[]; e: ("x" | "y") }');
  });

  it('folds the branches of a union of objects', () => {
    const source = ['a: ({', 'x: string', '} | {', 'y?: number', '})'].join('\n');
    expect(collapseBlocks(source, 200)).toBe('a: ({ x: string } | { y?: number })');
  });

  it('keeps a line per member where the folded line would be wider than the limit', () => {
    const source = ['a: {', 'b: {', 'c: string', '}', 'long_member_name: string', '}'].join('\n');
    expect(collapseBlocks(source, 30)).toBe(['a: {', 'b: { c: string }', 'long_member_name: string', '}'].join('\n'));
  });

  it('leaves blocks with multi-line comments or braces in string literals intact', () => {
    const multiLine = ['a: {', '/**', ' * Two', ' * lines.', ' */', 'b: string', '}'].join('\n');
    expect(collapseBlocks(multiLine, 200)).toBe(multiLine);
    expect(collapseBlocks(['a: {', 'b: "}{"', '}'].join('\n'), 200)).toBe('a: { b: "}{" }');
    // A brace in a doc comment is text, not structure: the outer block still folds.
    const braceInDoc = ['a: {', 'b: {', '/** Opens with { alone. */', 'c: string', '}', '}'].join('\n');
    expect(collapseBlocks(braceInDoc, 200)).toBe('a: { b: { /** Opens with { alone. */ c: string } }');
  });

  it('renders typings tsc accepts, docs and all, for a documented nested union', async () => {
    const typings = await generateTypings([
      {
        name: 'shape',
        description: 'A shape.',
        parameters: {
          type: 'object',
          additionalProperties: false,
          required: ['s'],
          properties: {
            s: {
              oneOf: [
                { type: 'object', additionalProperties: false, required: ['r'], properties: { r: { type: 'number', description: 'Radius */ with a close.' } } },
                { type: 'object', additionalProperties: true, properties: { w: { type: 'number' }, h: { enum: ['{', '}'] } } },
              ],
            },
          },
        },
        output: { type: 'null' },
      },
    ]);
    expect(typings).toContain('  shape: { s: ({ /** Radius *\\/ with a close. */ r: number } | ({ w?: number; h?: ("{" | "}") } & JsonObject)) }\n');
    const program = 'export async function run(): Promise<unknown> {\n  await tools.shape({ s: { r: 1 } });\n  return tools.shape({ s: { w: 2, h: "}", extra: true } });\n}\n';
    expect(tscErrors({ 'typings.d.ts': typings, 'program.ts': program })).toEqual([]);
  });
});
