import fs from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { JsonSchemaNode } from '../../src/schema/types.ts';
import type { ToolSchema } from '../../src/tool.ts';
import { generateTypings } from '../../typings/generate.ts';
import { tscErrors } from './tsc.ts';

// Schemas from MCP servers are untrusted: whatever they hold, generation must
// finish, never throw, never touch the file system or the network, and emit
// typings that compile.

function tool(name: string, parameters: unknown, output: unknown = { type: 'null' }, description = `The ${name} tool.`): ToolSchema {
  return { name, description, parameters, output } as ToolSchema;
}

function nested(depth: number, wrap: (inner: unknown) => unknown, leaf: unknown): unknown {
  let node = leaf;
  for (let i = 0; i < depth; i++) node = wrap(node);
  return node;
}

async function generateChecked(schemas: readonly unknown[]): Promise<string> {
  const typings = await generateTypings(schemas as ToolSchema[]);
  expect(tscErrors({ 'typings.d.ts': typings })).toEqual([]);
  return typings;
}

let dir: string;
let server: Server;
let requests = 0;
let baseUrl: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ptc-typings-'));
  await writeFile(join(dir, 'x.json'), JSON.stringify({ type: 'string', const: 'CANARY_FROM_FILE' }));
  server = createServer((_req, res) => {
    requests++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ type: 'string', const: 'CANARY_FROM_NETWORK' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  baseUrl = typeof address === 'object' && address ? `http://127.0.0.1:${address.port}` : '';
  // Load the generator's dependencies before the spies go in.
  await generateTypings([tool('warm', { type: 'object', properties: {} })]);
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('hostile schemas', () => {
  it('never resolves a $ref: no file read, no fetch, no request', async () => {
    const readFile = vi.spyOn(fs, 'readFile');
    const readFileSync = vi.spyOn(fs, 'readFileSync');
    const promisesReadFile = vi.spyOn(fs.promises, 'readFile');
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const refs = [join(dir, 'x.json'), 'x.json', `file://${join(dir, 'x.json')}`, `${baseUrl}/schema.json`, '#/definitions/a', '#'];
    const schemas = refs.map((ref, i) =>
      tool(`ref${i}`, {
        type: 'object',
        properties: { a: { $ref: ref }, b: { type: 'array', items: { $ref: ref } } },
        definitions: { a: { type: 'string' } },
      }, { $ref: ref }),
    );
    const typings = await generateTypings(schemas);
    const reads = [readFile, readFileSync, promisesReadFile].flatMap((spy) => spy.mock.calls.map((call) => String(call[0])));
    const fetches = fetchSpy.mock.calls.length;
    vi.restoreAllMocks();
    expect(reads).toEqual([]);
    expect(fetches).toBe(0);
    expect(tscErrors({ 'typings.d.ts': typings })).toEqual([]);
    expect(requests).toBe(0);
    expect(typings).not.toContain('CANARY');
    expect(typings).toContain('  ref0: JsonValue\n');
    expect(typings).toContain('  ref1: ({ a?: JsonValue; b?: JsonValue[] } & JsonObject)\n');
  });

  it('neutralises */ in tool, property and literal text', async () => {
    const typings = await generateChecked([
      tool(
        'evil',
        {
          type: 'object',
          properties: { 'x*/y': { type: 'string', description: 'ends */ declare const pwned: 1; /*', enum: ['*/', '"\\'] } },
        },
        { type: 'null', description: '*/*/' },
        'Tool */ declare const pwned: 1; /* done',
      ),
    ]);
    expect(typings).not.toMatch(/\*\/ declare/);
    expect(typings).toContain('Tool *\\/ declare const pwned: 1; /* done');
    expect(typings).toContain('"x*/y"?: ("*/" | "\\"\\\\")');
  });

  it('bounds a 5,000-deep schema at depth 64', async () => {
    const deepObject = nested(5_000, (inner) => ({ type: 'object', additionalProperties: false, properties: { a: inner } }), { type: 'string' });
    const deepArray = nested(5_000, (inner) => ({ type: 'array', items: inner }), { type: 'string' });
    const deepOneOf = nested(5_000, (inner) => ({ oneOf: [inner, { type: 'null' }] }), { type: 'string' });
    const typings = await generateChecked([
      tool('deep_object', deepObject),
      tool('deep_array', { type: 'object', properties: { list: deepArray } }),
      tool('deep_one_of', { type: 'object', properties: { u: deepOneOf } }),
    ]);
    expect(typings).toContain('a?: JsonValue');
    expect(typings.length).toBeLessThan(100_000);
  });

  it('truncates a 1 MB description', async () => {
    const huge = 'x'.repeat(1024 * 1024);
    const typings = await generateChecked([
      tool('big', { type: 'object', properties: { p: { type: 'string', description: huge } } }, { type: 'null', description: huge }, huge),
    ]);
    expect(typings.length).toBeLessThan(10_000);
    expect(typings).toContain(`${'x'.repeat(2_000)}…`);
  });

  it('degrades what it cannot render to JsonValue and skips what is not a tool', async () => {
    const cyclic: Record<string, unknown> = { type: 'object' };
    cyclic.properties = { self: cyclic };
    const throwing = {
      type: 'object',
      get properties(): never {
        throw new Error('boom');
      },
    };
    const trap = new Proxy({}, {
      get() {
        throw new Error('trap');
      },
      ownKeys() {
        throw new Error('trap');
      },
    });
    const wide = {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: 'string' }])),
    };
    const typings = await generateChecked([
      null,
      42,
      { name: 7 },
      { get name(): never { throw new Error('boom'); } },
      tool('cyclic', cyclic),
      tool('throwing', throwing),
      tool('proxy', trap, trap),
      tool('wide', wide),
      tool('weird', {
        type: 'object',
        properties: {
          injected: { tsType: 'any; declare const injected: 1' },
          types: { type: ['string', 'null'] },
          manyTypes: { type: Array.from({ length: 100_000 }, () => 'string') },
          badType: { type: 'date' },
          tuple: { type: 'array', items: [{ type: 'string' }] },
          objects: { enum: [{ a: 1 }, 'b'] },
          many: { type: 'string', enum: Array.from({ length: 10_000 }, (_, i) => `v${i}`) },
          constObject: { const: { a: 1 } },
          anyOf: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
          allOf: { allOf: [{ type: 'string' }] },
          schemaExtra: { type: 'object', additionalProperties: { type: 'string' } },
          emptyOneOf: { oneOf: [] },
          bool: true,
        } as unknown as Record<string, JsonSchemaNode>,
      }),
      tool('not_object', 'a string schema', [1, 2, 3]),
    ]);
    expect(typings).not.toContain('injected: 1');
    expect(typings).toContain('types?: (string | null)');
    expect(typings).toContain('manyTypes?: string\n');
    expect(typings).toContain('badType?: JsonValue');
    expect(typings).toContain('tuple?: JsonValue[]');
    expect(typings).toContain('objects?: JsonValue');
    expect(typings).toContain('many?: string\n');
    expect(typings).toContain('anyOf?: (string | number)');
    expect(typings).toContain('schemaExtra?: JsonObject');
    expect(typings).toContain('  proxy: JsonValue\n');
    expect(typings).toContain('  not_object: JsonValue\n');
    // 1,000 nodes a schema: the root and 999 properties; the object is left open for the dropped ones.
    expect(typings).toContain('    p998?: string\n  } & JsonObject)');
    expect(typings).not.toContain('p999');
    for (const name of ['cyclic', 'throwing', 'proxy', 'wide', 'weird', 'not_object']) expect(typings).toMatch(new RegExp(`^ {2}${name}: `, 'm'));
    const argsMap = typings.slice(typings.indexOf('interface ToolArgsMap {'), typings.indexOf('\n}\n', typings.indexOf('interface ToolArgsMap {')));
    expect(argsMap.match(/^ {2}[\w"]/gm)).toHaveLength(6);
  });

  it('accepts a non-array input as no tools', async () => {
    const typings = await generateTypings(undefined as unknown as ToolSchema[]);
    expect(typings).toContain('interface ToolArgsMap {}');
  });
});
