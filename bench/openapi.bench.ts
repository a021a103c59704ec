/**
 * OpenAPI source: loading and registering GitHub's REST spec (@octokit/openapi,
 * ~1,200 operations; target ≤ 2 s) and the RSS it adds; and a program's
 * nested call to a loopback operation against a bare `fetch` of the same URL
 * (seq100: 100 sequential calls per run; target overhead ≤ 0.3 ms per call),
 * and against a bare undici `request` too, the client the source uses.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { createCodeMode } from '../compose/code-mode.ts';
import { defineTool } from '../src/define-tool.ts';
import { openApiTools } from '../src/openapi/index.ts';
import { httpClient } from '../src/openapi/request.ts';
import { createToolRegistry } from '../src/registry.ts';
import { fmt, median, type BenchSection } from './section.ts';

const GITHUB_SPEC = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
const CALLS = 100;
const ROUNDS = 15;

async function loadGithub(): Promise<void> {
  const rssBefore = process.memoryUsage().rss;
  const start = performance.now();
  const definitions = await openApiTools({ name: 'github', spec: GITHUB_SPEC });
  const loaded = performance.now();
  const registry = createToolRegistry();
  for (const definition of definitions) registry.register(definition);
  const registered = performance.now();
  const added = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
  console.log(
    `GitHub spec: ${definitions.length} operations loaded in ${(loaded - start).toFixed(0)} ms, registered in ${(registered - loaded).toFixed(0)} ms` +
      ` (total ${(registered - start).toFixed(0)} ms, target ≤ 2,000 ms); RSS +${added.toFixed(0)} MiB`,
  );
}

async function nestedOverhead(): Promise<void> {
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"id":1,"name":"Rex"}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const spec = {
    openapi: '3.0.3',
    info: { title: 'Loop', version: '1' },
    paths: {
      '/pets/{id}': {
        get: {
          operationId: 'getPet',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } } } } } },
        },
      },
    },
  };
  const registry = createToolRegistry();
  for (const definition of await openApiTools({ name: 'loop', spec, baseUrl })) registry.register(definition);
  // The same nested call to a tool that does nothing: what any nested call costs, HTTP aside.
  registry.register(
    defineTool({
      name: 'noop',
      description: 'Returns its id.',
      parameters: { id: { type: 'integer', required: true } },
      output: { schema: { type: 'integer' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
      execute: async ({ id }) => id,
    }),
  );
  const codeMode = createCodeMode({ registry, runtime: 'in-process' });
  // Wall time and this process's CPU time (all threads) of one batch, ms: CPU is the steadier figure on a shared machine.
  const timed = async (body: () => Promise<void>) => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await body();
    const used = process.cpuUsage(cpu);
    return { wall: performance.now() - started, cpu: (used.user + used.system) / 1000 };
  };
  const run = (calls: number, tool = 'loop__getPet') => timed(async () => {
    const result = await registry.dispatch({
      name: 'run_code',
      arguments: { code: `for (let i = 0; i < ${calls}; i++) await tools.${tool}({ id: i }); return ${calls};`, description: 'bench' },
    });
    if (result.isError) throw new Error(result.error.message);
  });
  const bare = () => timed(async () => {
    for (let i = 0; i < CALLS; i++) await (await fetch(`${baseUrl}/pets/${i}`, { headers: { accept: 'application/json' } })).json();
  });
  // The source's own client (importing undici directly here would re-point the bare fetch above at it).
  const client = await httpClient();
  const bareRequest = () => timed(async () => {
    for (let i = 0; i < CALLS; i++) await (await client.request({ origin: baseUrl, path: `/pets/${i}`, method: 'GET', headers: { accept: 'application/json' } })).body.json();
  });
  try {
    for (let i = 0; i < 3; i++) {
      await run(CALLS);
      await run(0);
      await bare();
      await bareRequest();
    }
    const nested: { wall: number; cpu: number }[] = [];
    const empty: { wall: number; cpu: number }[] = [];
    const fetched: { wall: number; cpu: number }[] = [];
    const requested: { wall: number; cpu: number }[] = [];
    const noop: { wall: number; cpu: number }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      nested.push(await run(CALLS));
      empty.push(await run(0));
      fetched.push(await bare());
      requested.push(await bareRequest());
      noop.push(await run(CALLS, 'noop'));
    }
    for (const kind of ['wall', 'cpu'] as const) {
      const perNested = ((median(nested.map((t) => t[kind])) - median(empty.map((t) => t[kind]))) / CALLS) * 1000;
      const perFetch = (median(fetched.map((t) => t[kind])) / CALLS) * 1000;
      const perRequest = (median(requested.map((t) => t[kind])) / CALLS) * 1000;
      console.log(
        `loopback operation, seq${CALLS}, ${kind} (median of ${ROUNDS}): nested call ${fmt(perNested)} µs, bare fetch ${fmt(perFetch)} µs;` +
          ` overhead ${fmt(perNested - perFetch)} µs per call (target ≤ 300 µs);` +
          ` bare undici request ${fmt(perRequest)} µs, overhead over it ${fmt(perNested - perRequest)} µs;` +
          ` a nested call to a no-op tool ${fmt(((median(noop.map((t) => t[kind])) - median(empty.map((t) => t[kind]))) / CALLS) * 1000)} µs`,
      );
    }
  } finally {
    await codeMode.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

async function run(): Promise<void> {
  await loadGithub();
  await nestedOverhead();
}

export const section: BenchSection = { name: 'openapi', description: 'OpenAPI source: GitHub spec load, loopback nested call vs bare fetch', run };
