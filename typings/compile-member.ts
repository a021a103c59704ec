/**
 * One tool's entry of `ToolArgsMap` / `ToolOutputMap`, rendered by
 * json-schema-to-typescript. The input is already a SafeNode (no `$ref`, bounded),
 * and `$ref` resolution is disabled anyway: nothing is read from files or the network.
 */
import type { Options } from 'json-schema-to-typescript';
import type { SafeNode } from './safe-schema.ts';
import { propertyKey } from './text.ts';

export type MapName = 'ToolArgsMap' | 'ToolOutputMap';

type Compile = (typeof import('json-schema-to-typescript'))['compile'];
type CompileInput = Parameters<Compile>[0];

const OPTIONS: Partial<Options> = {
  bannerComment: '',
  // No prettier on the hot path: text.ts indents instead.
  format: false,
  additionalProperties: false,
  declareExternallyReferenced: true,
  enableConstEnums: false,
  ignoreMinAndMaxItems: true,
  strictIndexSignatures: false,
  unknownAny: true,
  unreachableDefinitions: false,
  // Never consulted (every $ref is gone before compile); a root that cannot exist.
  cwd: '/nonexistent/',
  $refOptions: {
    resolve: { external: false, file: false, http: false },
    continueOnError: false,
  } as Options['$refOptions'],
};

let loading: Promise<Compile> | undefined;

/** Loaded on first use: the library pulls in prettier and a $ref parser at import time. */
function loadCompile(): Promise<Compile> {
  loading ??= import('json-schema-to-typescript').then((module) => module.compile);
  return loading;
}

/**
 * The member lines (`name: {...}`) for one tool, unindented. Falls back to
 * `JsonValue` when the generator fails or returns something other than the
 * one interface we asked for; the fallback never throws.
 */
export async function compileMember(name: string, schema: SafeNode, map: MapName): Promise<string> {
  const compile = await loadCompile();
  const rendered = await tryCompile(compile, name, schema, map);
  if (rendered !== undefined) return rendered;
  const degraded: SafeNode = schema.description === undefined ? { tsType: 'JsonValue' } : { tsType: 'JsonValue', description: schema.description };
  return (await tryCompile(compile, name, degraded, map)) ?? `${propertyKey(name)}: JsonValue`;
}

async function tryCompile(compile: Compile, name: string, schema: SafeNode, map: MapName): Promise<string | undefined> {
  const names = [name];
  const root = { type: 'object', properties: { k0: placeholders(schema, names) }, required: ['k0'], additionalProperties: false };
  try {
    const body = membersOf(await compile(root as CompileInput, map, OPTIONS), map);
    return body === undefined ? undefined : restoreKeys(body, names);
  } catch {
    return undefined;
  }
}

/**
 * A copy whose property keys are `k0`, `k1`, …: the generator trips over keys
 * such as `hasOwnProperty`, so it never sees a real one. `names[i]` is key `ki`.
 */
function placeholders(node: SafeNode, names: string[]): SafeNode {
  const copy: SafeNode = { ...node };
  if (node.oneOf) copy.oneOf = node.oneOf.map((branch) => placeholders(branch, names));
  if (node.allOf) copy.allOf = node.allOf.map((branch) => placeholders(branch, names));
  if (node.items) copy.items = placeholders(node.items, names);
  if (node.properties) {
    const properties: Record<string, SafeNode> = {};
    const renamed = new Map<string, string>();
    for (const key of Object.keys(node.properties)) {
      const placeholder = `k${names.length}`;
      names.push(key);
      renamed.set(key, placeholder);
      properties[placeholder] = placeholders(node.properties[key], names);
    }
    copy.properties = properties;
    copy.required = (node.required ?? []).map((key) => renamed.get(key)).filter((key) => key !== undefined);
  }
  return copy;
}

/** Puts the real keys back: a placeholder only ever starts a member line (JSDoc lines start with ` *`). */
function restoreKeys(body: string, names: readonly string[]): string | undefined {
  let failed = false;
  const text = body.replace(/^k(\d+)(?=\??: )/gm, (_match, index: string) => {
    const name = names[Number(index)];
    if (name === undefined) failed = true;
    return propertyKey(name ?? '');
  });
  return failed ? undefined : text;
}

/** The body of `export interface <map> {...}`, or undefined if anything else was emitted. */
function membersOf(output: string, map: MapName): string | undefined {
  const head = `export interface ${map} {\n`;
  const tail = '\n}\n';
  if (!output.startsWith(head) || !output.endsWith(tail)) return undefined;
  const body = output.slice(head.length, output.length - tail.length);
  if (/^export /m.test(body)) return undefined;
  return body;
}
