/**
 * The MCP face: what `tools/list` costs a client for the 300-tool fixture
 * catalogue exposed directly vs through `ptc mcp` (run_code + search_tools),
 * the built-in tools' typings, and search latency over 1,000 tools
 * (target: p50 ≤ 2 ms).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createToolSearch } from '../src/search/index.ts';
import { catalogue, SEARCH_QUERIES } from '../test/mcp-server/fixtures/catalogue.ts';
import { catalogueServer, cliPath, nodeBin } from '../test/mcp-server/helpers.ts';
import { builtinTypings } from '../typings/write-builtin.ts';
import { fmt, quantile, type BenchSection } from './section.ts';

const SEARCH_TOOLS = 1_000;
const SEARCHES = 1_000;

async function listedChars(command: string, args: string[], env: Record<string, string> = {}): Promise<{ chars: number; tools: number }> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'ignore' }));
  try {
    const listed = await client.listTools();
    return { chars: JSON.stringify(listed.tools).length, tools: listed.tools.length };
  } finally {
    await client.close();
  }
}

async function run(): Promise<void> {
  const typings = await builtinTypings();
  const body = typings.slice(typings.indexOf('\n') + 1);
  console.log(`built-in tools' typings: ${Buffer.byteLength(body)} bytes (5,744 before compaction)`);

  const direct = await listedChars(nodeBin, [catalogueServer], { CATALOGUE_SIZE: '300' });
  const dir = await mkdtemp(join(tmpdir(), 'ptc-bench-mcp-'));
  try {
    await writeFile(join(dir, 'ptc.config.json'), JSON.stringify({ mcpServers: { cat: { command: nodeBin, args: [catalogueServer], env: { CATALOGUE_SIZE: '300' } } } }));
    const args = ['--no-node-snapshot', cliPath, 'mcp', '--config', join(dir, 'ptc.config.json'), '--workspace', join(dir, 'ws'), '--data', join(dir, 'data'), '--runtime', 'in-process', '--log-level', 'silent'];
    const through = await listedChars(nodeBin, args);
    console.log(`tools/list, 300 upstream tools exposed directly: ${direct.chars.toLocaleString('en-US')} chars (${direct.tools} tools)`);
    console.log(`tools/list through ptc mcp (run_code + search_tools): ${through.chars.toLocaleString('en-US')} chars (${through.tools} tools)`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  const tools = catalogue(SEARCH_TOOLS).map((tool) => ({
    name: `cat__${tool.name}`,
    description: tool.description,
    parameters: Object.entries((tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>).map(([name, p]) => ({ name, description: p.description })),
  }));
  const built = performance.now();
  const search = createToolSearch(tools);
  const buildMs = performance.now() - built;
  for (let i = 0; i < 200; i++) search.search(SEARCH_QUERIES[i % SEARCH_QUERIES.length][0], 5);
  const samples: number[] = [];
  for (let i = 0; i < SEARCHES; i++) {
    const query = SEARCH_QUERIES[i % SEARCH_QUERIES.length][0];
    const start = process.hrtime.bigint();
    search.search(query, 5);
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  samples.sort((a, b) => a - b);
  console.log(
    `search over ${SEARCH_TOOLS} tools (${SEARCHES} queries, top 5): p50 ${fmt(quantile(samples, 0.5))} µs, p99 ${fmt(quantile(samples, 0.99))} µs` +
      ` (target p50 ≤ 2,000 µs); index built in ${buildMs.toFixed(1)} ms`,
  );
}

export const section: BenchSection = { name: 'mcp', description: 'MCP face: tools/list size direct vs ptc mcp, search latency', run };
