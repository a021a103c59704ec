/**
 * Typings for 50 tools: cold (a fresh service, nothing cached) and cached;
 * and the warm type-check of a 30-line program (target ≤ 20 ms p50).
 */
import type { JsonSchemaNode } from '../src/schema/types.ts';
import type { ToolSchema } from '../src/tool.ts';
import { createTypingsService } from '../typings/service.ts';
import { createTypechecker } from '../typings/typecheck.ts';
import { fmt, median, quantile, type BenchSection } from './section.ts';

const TOOLS = 50;
const COLD_ROUNDS = 10;
const CACHED_CALLS = 2_000;
const CHECKS = 200;

/** A realistic tool: a handful of parameters, an enum, a nested object, an array of objects out. */
function tool(i: number): ToolSchema {
  const entry: JsonSchemaNode = {
    type: 'object',
    additionalProperties: false,
    properties: {
      path: { type: 'string', description: 'Workspace-relative path.' },
      line: { type: 'integer' },
      kind: { type: 'string', enum: ['file', 'directory', 'symlink'] },
      size: { oneOf: [{ type: 'integer' }, { type: 'null' }] },
    },
    required: ['path', 'kind'],
  };
  return {
    name: `tool_${String(i).padStart(2, '0')}`,
    description: `Tool number ${i}: does one thing on the workspace and reports what it found.`,
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Workspace-relative path.' },
        pattern: { type: 'string', description: 'A glob such as `src/**/*.ts`.' },
        limit: { type: 'integer', description: 'At most this many entries.', default: 100 },
        mode: { type: 'string', enum: ['fast', 'thorough'] },
        options: {
          type: 'object',
          additionalProperties: false,
          properties: { caseSensitive: { type: 'boolean' }, exclude: { type: 'array', items: { type: 'string' } } },
        },
      },
      required: ['path'],
    },
    output: {
      type: 'object',
      additionalProperties: false,
      properties: { entries: { type: 'array', items: entry }, truncated: { type: 'boolean' }, next: { type: 'string' } },
      required: ['entries', 'truncated'],
    },
  };
}

const PROGRAM = [
  'const first = await tools.tool_00({ path: "src", pattern: "**/*.ts", limit: 50 });',
  'const files = first.entries.filter((e) => e.kind === "file");',
  'console.log(`found ${files.length} files`);',
  'const details = await Promise.all(',
  '  files.slice(0, 5).map((f) => tools.tool_01({ path: f.path, mode: "fast" })),',
  ');',
  'const sizes = new Map<string, number>();',
  'for (const d of details) {',
  '  for (const e of d.entries) {',
  '    if (e.size !== null && e.size !== undefined) sizes.set(e.path, e.size);',
  '  }',
  '}',
  'let total = 0;',
  'for (const [, size] of sizes) total += size;',
  'const largest = [...sizes.entries()].sort((a, b) => b[1] - a[1]).slice(0, 3);',
  'try {',
  '  await tools.tool_02({ path: "missing", options: { caseSensitive: true, exclude: ["dist"] } });',
  '} catch (error) {',
  '  if (error instanceof ToolCallError) {',
  '    console.log(error.code, error.toolName);',
  '  } else {',
  '    throw error;',
  '  }',
  '}',
  'const summary = largest.map(([path, size]) => `${path}: ${size}`).join("\\n");',
  'const truncated = details.some((d) => d.truncated);',
  'if (truncated) console.log("some listings were truncated");',
  'const next = first.next ?? null;',
  'console.log(summary);',
  'return { total, largest, next };',
].join('\n');

function ms(from: number): number {
  return performance.now() - from;
}

export async function benchTypings(): Promise<void> {
  const schemas = Array.from({ length: TOOLS }, (_, i) => tool(i));

  let start = performance.now();
  const typings = await createTypingsService().typings(schemas);
  console.log(`typings, ${TOOLS} tools, first in process (loads json-schema-to-typescript): ${fmt(ms(start) * 1000)} µs, ${typings.length} chars`);

  const cold: number[] = [];
  for (let r = 0; r < COLD_ROUNDS; r++) {
    start = performance.now();
    await createTypingsService().typings(schemas);
    cold.push(ms(start) * 1000);
  }
  console.log(`typings, ${TOOLS} tools, cold (fresh service):  p50 ${fmt(median(cold))} µs  max ${fmt(cold[cold.length - 1])} µs`);

  const service = createTypingsService();
  await service.typings(schemas);
  const cached: number[] = [];
  for (let i = 0; i < CACHED_CALLS; i++) {
    start = performance.now();
    await service.typings(schemas);
    cached.push(ms(start) * 1000);
  }
  cached.sort((a, b) => a - b);
  console.log(`typings, ${TOOLS} tools, cached (JSON + sha256 + lookup): p50 ${fmt(quantile(cached, 0.5))} µs  p95 ${fmt(quantile(cached, 0.95))} µs`);

  const checker = createTypechecker();
  start = performance.now();
  const first = await checker.check(PROGRAM, typings);
  if (first.length > 0) console.log(`  (unexpected diagnostics: ${JSON.stringify(first)})`);
  console.log(`type-check, 30 lines, first in process (loads typescript, parses lib): ${fmt(ms(start) * 1000)} µs`);

  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < CHECKS; i++) {
    // A different program each time, as in real use: only the typings and the lib are reused.
    const code = `${PROGRAM}\n// run ${i}`;
    const cpuStart = process.cpuUsage();
    start = performance.now();
    await checker.check(code, typings);
    wall.push(ms(start) * 1000);
    const used = process.cpuUsage(cpuStart);
    cpu.push(used.user + used.system);
  }
  wall.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  console.log(
    `type-check, 30 lines, warm (${CHECKS} checks): wall p50 ${fmt(quantile(wall, 0.5))} µs  p95 ${fmt(quantile(wall, 0.95))} µs;` +
      ` cpu p50 ${fmt(quantile(cpu, 0.5))} µs  (target ≤ 20 ms p50)`,
  );
}

export const section: BenchSection = {
  name: 'typings',
  description: `typings for ${TOOLS} tools (cold, cached) and the warm type-check of a 30-line program`,
  run: benchTypings,
};
