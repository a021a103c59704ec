// End to end against a mock server no one here wrote: Stoplight Prism serving a Petstore spec on loopback.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiTools } from '../../src/openapi/index.ts';
import { createToolRegistry } from '../../src/registry.ts';
import { createTypingsService } from '../../typings/service.ts';
import { createCodeModeCore } from '../../src/code-mode/code-mode.ts';
import { createBench, sharedRuntime, valueOf, type Bench } from '../code-mode/harness.ts';

const root = path.resolve(import.meta.dirname, '../..');
const SPEC = path.join(root, 'test/openapi/fixtures/petstore.yaml');
const PRISM = path.join(root, 'node_modules/.bin/prism');

let prism: ChildProcess;
let prismUrl: string;
let slow: Server;
let bench: Bench;
const typings = createTypingsService();

/** Starts prism on a free loopback port; resolves with its URL once it prints that it listens. */
function startPrism(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(PRISM, ['mock', SPEC, '--port', '0', '--host', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Prism is listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match !== null) resolve({ child, url: match[1] });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`prism exited (${code}) before listening:\n${output.slice(-2000)}`)));
  });
}

beforeAll(async () => {
  ({ child: prism, url: prismUrl } = await startPrism());
  // A server that takes requests and never answers them: the call must end at its timeoutMs.
  slow = createServer(() => undefined);
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/v1`;
  bench = createBench({ typings });
  const sources = await Promise.all([
    openApiTools({ name: 'pets', spec: SPEC, baseUrl: prismUrl }),
    // Prism answers the status a `Prefer: code=…` header asks for: configured headers reach the server.
    openApiTools({ name: 'pets404', spec: SPEC, baseUrl: prismUrl, headers: { Prefer: 'code=404' }, include: ['showPetById'] }),
    openApiTools({ name: 'pets500', spec: SPEC, baseUrl: prismUrl, headers: { Prefer: 'code=500' }, include: ['GET /pets'] }),
    openApiTools({ name: 'slow', spec: SPEC, baseUrl: slowUrl, timeoutMs: 300, include: ['listPets'] }),
  ]);
  for (const definition of sources.flat()) bench.registry.register(definition);
}, 60_000);

afterAll(async () => {
  await bench?.close();
  await typings.close?.();
  prism?.kill();
  slow?.closeAllConnections();
  await new Promise((resolve) => slow?.close(resolve));
});

describe('an OpenAPI spec served by prism', () => {
  it('one tool per operation, include picks operations by operationId or METHOD /path', () => {
    const names = bench.registry.schemas().map((schema) => schema.name).filter((name) => name.includes('__'));
    expect(names).toEqual(['pets404__showPetById', 'pets500__listPets', 'pets__createPet', 'pets__listPets', 'pets__showPetById', 'slow__listPets']);
  });

  it('a program lists, filters and creates', async () => {
    const run = await bench.runCode(`
      const all = await tools.pets__listPets({ limit: 10 });
      const dogs = all.filter((pet) => pet.tag === 'dog').map((pet) => pet.name);
      const one = await tools.pets__showPetById({ petId: 1 });
      const created = await tools.pets__createPet({ body: { name: 'Kitty', tag: 'cat' } });
      return { count: all.length, dogs, one, created };
    `);
    expect(valueOf(run).result).toEqual({
      count: 4,
      dogs: ['Rex', 'Fido'],
      one: { id: 1, name: 'Rex', tag: 'dog' },
      created: { id: 5, name: 'Kitty', tag: 'cat' },
    });
  });

  it('404 and 500 are typed failures with HTTP_<status>, the status and a body excerpt', async () => {
    const run = await bench.runCode(`
      const out = [];
      for (const call of [() => tools.pets404__showPetById({ petId: 99 }), () => tools.pets500__listPets({})]) {
        try { await call(); out.push('no error'); } catch (e) { out.push({ code: e.code, message: e.message }); }
      }
      return out;
    `);
    const [notFound, broken] = valueOf(run).result as { code: string; message: string }[];
    expect(notFound.code).toBe('HTTP_404');
    expect(notFound.message).toContain('GET /pets/99 answered 404');
    expect(notFound.message).toContain('no pet with that id');
    expect(broken.code).toBe('HTTP_500');
    expect(broken.message).toContain('the pet database is down');

    // Outside code mode, the failure's info carries the status as a field.
    const registry = createToolRegistry();
    for (const definition of await openApiTools({ name: 'pets', spec: SPEC, baseUrl: prismUrl, headers: { Prefer: 'code=404' } })) registry.register(definition);
    const direct = await registry.dispatch({ name: 'pets__showPetById', arguments: { petId: 7 } });
    expect(direct.isError && direct.error.info).toEqual({ name: 'PtcError', code: 'HTTP_404', status: 404 });
  });

  it('arguments are validated against the full schema before any request', async () => {
    const run = await bench.runCode(`
      const out = [];
      for (const args of [{ body: { name: '' } }, { body: { name: 'Rex', owner: 'me' } }, {}]) {
        try { await tools.pets__createPet(args); out.push('sent'); } catch (e) { out.push(e.code + ': ' + e.message); }
      }
      try { await tools.pets__listPets({ limit: 1000 }); } catch (e) { out.push(e.code + ': ' + e.message); }
      return out;
    `);
    const [empty, extra, missing, tooMany] = valueOf(run).result as string[];
    expect(empty).toMatch(/^INVALID_ARGS: .*arguments\.body\.name: must NOT have fewer than 1 characters/s);
    expect(extra).toMatch(/^INVALID_ARGS: .*arguments\.body: has an unknown key "owner"/s);
    expect(missing).toMatch(/^INVALID_ARGS: .*arguments: is missing the required key "body"/s);
    expect(tooMany).toMatch(/^INVALID_ARGS: .*arguments\.limit: must be <= 100/s);
  });

  it('a response slower than timeoutMs fails TOOL_TIMEOUT', async () => {
    const run = await bench.runCode(`try { await tools.slow__listPets({}); return 'answered'; } catch (e) { return e.code; }`);
    expect(valueOf(run).result).toBe('TOOL_TIMEOUT');
  });

  it('typings come from the full schemas: constraints in doc comments, an output outside the subset typed and marked unvalidated', async () => {
    const text = await bench.codeMode.typings();
    expect(text).toContain('/** How many items to return at one time (max 100) (query parameter) @minimum 1 @maximum 100 */ limit?: number');
    expect(text).toContain("/** The pet's name @minLength 1 */ name: string");
    // Pets has maxItems: not in the subset, so typed from the schema and marked.
    expect(text).toMatch(/Output NOT validated \(its declared schema could not be enforced\)[^\n]*\n\s*pets__listPets: \{[^\n]*\}\[\]\n/);
    // Pet converts exactly (nullable → oneOf with null): enforced, and typed.
    const schema = bench.registry.schemas().find((s) => s.name === 'pets__showPetById')!;
    expect(schema.unvalidatedOutput).toBeUndefined();
    expect(schema.output).toMatchObject({ type: 'object', required: ['id', 'name'], properties: { tag: { oneOf: [{ type: 'string' }, { type: 'null' }] } } });
  });

  it('GET is concurrency-safe, other methods exclusive; approvals by method gate the definitions and pause a run', async () => {
    expect(bench.registry.get('pets__listPets')!.isConcurrencySafe({})).toBe(true);
    expect(bench.registry.get('pets__createPet')!.isConcurrencySafe({ body: { name: 'x' } })).toBe(false);
    const definitions = await openApiTools({ name: 'p', spec: SPEC, baseUrl: prismUrl, approvals: { methods: ['POST'] } });
    expect(definitions.filter((d) => d.needsApproval === true).map((d) => d.name)).toEqual(['p__createPet']);
    // Gated by method: the program's GET goes out, its POST pauses the run for a person.
    const registry = createToolRegistry();
    for (const definition of definitions) registry.register(definition);
    const gated = createCodeModeCore({ registry, runtime: sharedRuntime(), typings: { typings: async () => '', prompt: async () => '', check: async () => [] } });
    try {
      const tool = await gated.asTool();
      const paused = await tool.execute(
        { code: `const all = await tools.p__listPets({}); await tools.p__createPet({ body: { name: 'Kitty' } }); return all.length;`, description: 'gated' },
        { callId: 'gated-1', sessionId: 'g' },
      );
      expect(paused.status).toBe('paused');
      expect(paused.paused?.pending).toEqual([expect.objectContaining({ toolName: 'p__createPet', args: { body: { name: 'Kitty' } } })]);
    } finally {
      await gated.close();
    }
    const byGlob = await openApiTools({ name: 'p', spec: SPEC, baseUrl: prismUrl, approvals: ['show*'], exclude: ['POST /pets'] });
    expect(byGlob.map((d) => [d.name, d.needsApproval === true])).toEqual([
      ['p__listPets', false],
      ['p__showPetById', true],
    ]);
  });
});
