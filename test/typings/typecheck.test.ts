import { describe, expect, it } from 'vitest';
import type { ToolSchema } from '../../src/tool.ts';
import { AMBIENT_GLOBALS } from '../../typings/ambient.ts';
import { generateTypings } from '../../typings/generate.ts';
import { createTypechecker } from '../../typings/typecheck.ts';
import { SMALL_TOOLS } from './fixtures.ts';
import { tscErrors } from './tsc.ts';

const SAMPLE = [
  'const file = await tools.read({ path: "notes.txt" });',
  'const [a, b] = await Promise.all([',
  '  tools["my-tool"]({ mode: "fast", tags: ["x"], value: null, options: { deep: true, extra: [1, "two"] } }),',
  '  tools.mcp_fetch({ url: "https://example.com" }),',
  ']);',
  'console.log(file.lines, b.content.length);',
  'try {',
  '  await tools.read({ path: "missing.txt", offset: 2 });',
  '} catch (error) {',
  '  if (error instanceof ToolCallError && error.code === "TOOL_FAILED") console.log(error.toolName, error.callId, error.message);',
  '}',
  'const names: ToolName[] = ["read", "my-tool"];',
  'const timer = setTimeout(() => {}, 10);',
  'clearTimeout(timer);',
  'return { text: file.text.slice(0, 10), a, names };',
].join('\n');

describe('typecheck', () => {
  it('the typings and a sample program compile with tsc, no error', async () => {
    const typings = await generateTypings(SMALL_TOOLS);
    const program = `export async function run(): Promise<unknown> {\n${SAMPLE}\n}\n`;
    expect(tscErrors({ 'typings.d.ts': typings, 'globals.d.ts': AMBIENT_GLOBALS, 'program.ts': program })).toEqual([]);
  });

  it('finds nothing wrong with the sample program', async () => {
    const checker = createTypechecker();
    expect(await checker.check(SAMPLE, await generateTypings(SMALL_TOOLS))).toEqual([]);
  });

  it('reports a misspelt tool at the model\'s line and column', async () => {
    const checker = createTypechecker();
    const code = 'const x = 1;\nconst file = await tools.raed({ path: "a" });\nreturn file;';
    const [diagnostic, ...rest] = await checker.check(code, await generateTypings(SMALL_TOOLS));
    expect(rest).toEqual([]);
    expect(diagnostic).toMatchObject({ line: 2, column: 26, code: 2339 });
    expect(diagnostic.message).toContain("Property 'raed' does not exist");
  });

  it('reports a wrong argument shape at the offending property', async () => {
    const checker = createTypechecker();
    const typings = await generateTypings(SMALL_TOOLS);
    const code = [
      'await tools.read({ path: 42 });',
      '    await tools["my-tool"]({ mode: "medium" });',
      'await tools["my-tool"]({ mode: "fast", unknownKey: 1 });',
      'await tools.read({});',
    ].join('\n');
    const found = await checker.check(code, typings);
    expect(found.map(({ line, column, code }) => ({ line, column, code }))).toEqual([
      { line: 1, column: 20, code: 2322 },
      { line: 2, column: 30, code: 2322 },
      { line: 3, column: 40, code: 2353 },
      { line: 4, column: 18, code: 2345 },
    ]);
    expect(found[0].message).toBe("Type 'number' is not assignable to type 'string'.");
    expect(found[1].message).toContain('"medium"');
  });

  it('rejects syntax the sandbox cannot run, and unknown globals', async () => {
    const checker = createTypechecker();
    const typings = await generateTypings(SMALL_TOOLS);
    const found = await checker.check('enum Mode { A }\nconst r = require("fs");\nprocess.exit(1);\nconst d = document.title;', typings);
    expect(found.map((d) => [d.line, d.code])).toEqual([
      [1, 1294],
      [2, 2591],
      [3, 2591],
      [4, 2584],
    ]);
    expect(found[1].message).toBe("Cannot find name 'require': the sandbox has no such global (no Node.js or browser APIs; use the tools).");
  });

  it('clamps positions outside the model\'s code to its first and last lines', async () => {
    const checker = createTypechecker();
    const typings = await generateTypings(SMALL_TOOLS);
    const [unclosed] = await checker.check('if (true) {\n  const x = 1;', typings);
    expect(unclosed).toMatchObject({ line: 2, column: 15, code: 1005 });
    expect(await checker.check('', typings)).toEqual([]);
    expect(await checker.check('const n: number = 1;\nreturn n;', typings)).toEqual([]);
  });

  it('reports only the syntax errors of code that does not parse', async () => {
    const checker = createTypechecker();
    const found = await checker.check('const x = ;\nawait tools.raed({});', await generateTypings(SMALL_TOOLS));
    expect(found.map(({ line, column, code }) => ({ line, column, code }))).toEqual([{ line: 1, column: 11, code: 1109 }]);
  });

  it('types tools named like Object.prototype members', async () => {
    const checker = createTypechecker();
    const tools: ToolSchema[] = ['__proto__', 'constructor'].map((name) => ({
      name,
      description: `The ${name} tool.`,
      parameters: { type: 'object', additionalProperties: false, properties: { a: { type: 'string' } }, required: ['a'] },
      output: { type: 'object', additionalProperties: false, properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    }));
    const code = 'const r = await tools.__proto__({ a: "x" });\nconst ok: boolean = r.ok && (await tools.constructor({ a: "y" })).ok;\nawait tools["__proto__"]({ a: 1 });';
    expect(await checker.check(code, await generateTypings(tools))).toMatchObject([{ line: 3, column: 28, code: 2322 }]);
  });

  it('accepts plain JavaScript: implicit any and untyped catch variables', async () => {
    const checker = createTypechecker();
    const code = 'function twice(x) { return x * 2; }\ntry { twice(1); } catch (e) { console.log(e.message); }';
    expect(await checker.check(code, await generateTypings(SMALL_TOOLS))).toEqual([]);
  });

  it('never reads a file the program names', async () => {
    const checker = createTypechecker();
    const code = '/// <reference path="/etc/passwd" />\n/// <reference lib="dom" />\n/// <reference types="node" />\nconst t = document.title;';
    const found = await checker.check(code, await generateTypings(SMALL_TOOLS));
    expect(found.some((d) => d.code === 2584 && d.line === 4)).toBe(true);
  });

  it('follows a change of typings between checks', async () => {
    const checker = createTypechecker();
    const code = 'await tools.read({ path: "a" });';
    expect(await checker.check(code, await generateTypings(SMALL_TOOLS))).toEqual([]);
    const [missing] = await checker.check(code, await generateTypings(SMALL_TOOLS.slice(1)));
    expect(missing).toMatchObject({ line: 1, column: 13, code: 2339 });
  });
});
