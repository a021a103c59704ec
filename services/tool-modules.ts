/**
 * Tool modules named in the config (`tools: ["./tools/crm.ts", "pkg/tools"]`)
 * as tool sources: each module's `defineTool` definitions (a default array,
 * or named exports) are registered; a module that does not load, exports no
 * definition or is refused by the registry stops the start, naming itself.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { definitionShapeProblems } from '../src/definition-rules.ts';
import type { AnyToolDefinition } from '../src/tool.ts';
import { staticToolSource, type ToolSource } from '../src/tool-source.ts';

/**
 * A path (starting with `.` or `/`) resolves against `dir` (the config
 * file's folder); anything else is a package specifier, resolved from `dir`
 * as Node would from a file there. TypeScript modules load through Node's
 * type stripping.
 */
export function toolModuleSource(specifier: string, dir: string): ToolSource {
  return staticToolSource('module', specifier, async () => definitionsOf(await import(resolveModule(specifier, dir)), specifier));
}

export function resolveModule(specifier: string, dir: string): string {
  if (specifier.startsWith('.') || path.isAbsolute(specifier)) return pathToFileURL(path.resolve(dir, specifier)).href;
  try {
    return pathToFileURL(createRequire(path.join(dir, 'ptc.config.json')).resolve(specifier)).href;
  } catch (error) {
    throw new Error(`the package could not be resolved from ${dir}: ${(error as Error).message.split('\n', 1)[0]}`, { cause: error });
  }
}

/** A module's definitions: its default export when that is an array, else its named exports that are definitions (and a default one). */
export function definitionsOf(namespace: Record<string, unknown>, specifier: string): AnyToolDefinition[] {
  const fromDefault = namespace.default;
  const candidates: [string, unknown][] = Array.isArray(fromDefault)
    ? fromDefault.map((value, i) => [`default[${i}]`, value])
    : Object.entries(namespace).filter(([, value]) => looksLikeDefinition(value));
  if (candidates.length === 0) {
    throw new Error(`${specifier} exports no tool definition: export defineTool({...}) results by name, or a default array of them`);
  }
  const problems: string[] = [];
  for (const [exportName, value] of candidates) {
    for (const problem of definitionShapeProblems(value)) problems.push(`${exportName}: ${problem}`);
  }
  if (problems.length > 0) throw new Error(`${specifier} exports a malformed tool definition:\n- ${problems.join('\n- ')}`);
  return candidates.map(([, value]) => value as AnyToolDefinition);
}

function looksLikeDefinition(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { execute?: unknown }).execute === 'function' && typeof (value as { name?: unknown }).name === 'string';
}
