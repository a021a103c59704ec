import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ISOLATE_HOST_FLAGS } from '../../sandbox/host-flags.ts';

// The package's entry points: package.json `exports` and entries/ agree, and
// each entry, imported in a fresh process, loads only what it is for.
const root = new URL('../../', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  main: string;
  types: string;
  exports: Record<string, { types: string; default: string }>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

async function load(entry: string, ...extra: string[]): Promise<unknown> {
  const { stdout } = await promisify(execFile)(process.execPath, [...ISOLATE_HOST_FLAGS, `${root}test/entries/load-probe.ts`, `${root}entries/${entry}.ts`, ...extra], {
    timeout: 60_000,
  });
  return JSON.parse(stdout) as unknown;
}
const packagesOf = (loaded: string[]) => loaded.filter((item) => !item.includes('/') || item.startsWith('@'));
const wingsOf = (loaded: string[]) => [...new Set(loaded.filter((item) => item.includes('/') && !item.startsWith('@')).map((item) => item.split('/')[0]))].sort();

describe('package entry points', () => {
  it('package.json exports one subpath per file of entries/, built to dist/entries/', () => {
    const files = readdirSync(`${root}entries`).filter((file) => file.endsWith('.ts')).map((file) => file.slice(0, -3)).sort();
    const fromExports = Object.entries(pkg.exports)
      .map(([subpath, target]) => {
        const name = subpath === '.' ? 'index' : subpath.slice(2);
        expect(target).toEqual({ types: `./dist/entries/${name}.d.ts`, default: `./dist/entries/${name}.js` });
        return name;
      })
      .sort();
    expect(fromExports).toEqual(files);
    expect(pkg.main).toBe(pkg.exports['.'].default);
    expect(pkg.types).toBe(pkg.exports['.'].types);
    // The AI SDK is the adapter's optional peer, installed here only to test it.
    expect(pkg.peerDependenciesMeta.ai).toEqual({ optional: true });
    expect(pkg.dependencies.ai).toBeUndefined();
    expect(pkg.devDependencies.ai).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('ptc-executor loads the contract and Code Mode only: no sandbox, Fastify, prom-client, MCP SDK or service', async () => {
    const loaded = (await load('index')) as string[];
    // ajv (schema validation), diff (write/edit cards) and picomatch (the workspace tools' globs) are all it needs.
    expect(packagesOf(loaded)).toEqual(['ajv', 'diff', 'fast-deep-equal', 'fast-uri', 'json-schema-traverse', 'picomatch']);
    expect(wingsOf(loaded)).toEqual(['compose', 'entries', 'src', 'typings']);
    // Not the service's config and route validators (plugin.ts and config.ts build ajv instances on import).
    expect(loaded.filter((file) => file.startsWith('services/'))).toEqual([]);
  });

  it('ptc-executor loads isolated-vm when the first program runs, not when code mode is created', async () => {
    const probe = (await load('index', 'run')) as { imported: string[]; created: string[]; ran: string[]; value: unknown };
    expect(probe.value).toEqual({ logs: [], result: 42 });
    expect(probe.imported).not.toContain('isolated-vm');
    expect(probe.created).not.toContain('isolated-vm');
    expect(probe.ran).toContain('isolated-vm');
    expect(probe.ran).toContain('sandbox/in-process-runtime.ts');
  });

  it('ptc-executor/service loads Fastify and prom-client; /mcp the MCP SDK only; /ai-sdk the AI SDK only', async () => {
    const [service, mcp, aiSdk] = (await Promise.all([load('service'), load('mcp'), load('ai-sdk')])) as string[][];
    expect(packagesOf(service)).toEqual(expect.arrayContaining(['fastify', 'prom-client', '@modelcontextprotocol/sdk']));
    expect(service).not.toContain('isolated-vm');
    // The OpenTelemetry SDK is an optional peer: the service loads it only when OTEL_* turns tracing on
    // (prom-client loads @opentelemetry/api itself, when it is installed).
    expect(packagesOf(service).filter((name) => name.startsWith('@opentelemetry/') && name !== '@opentelemetry/api')).toEqual([]);

    expect(packagesOf(mcp)).toContain('@modelcontextprotocol/sdk');
    // The server face lives with the service (services/mcp-*.ts) and renders typings, but needs no Fastify.
    expect(wingsOf(mcp)).toEqual(['entries', 'services', 'src', 'typings']);
    for (const heavy of ['fastify', 'prom-client', 'isolated-vm', 'ai']) expect(mcp).not.toContain(heavy);

    expect(packagesOf(aiSdk)).toContain('ai');
    expect(wingsOf(aiSdk)).toEqual(['adapters', 'entries', 'src']);
    for (const heavy of ['fastify', 'prom-client', 'isolated-vm', '@modelcontextprotocol/sdk']) expect(aiSdk).not.toContain(heavy);
  });

  it('ptc-executor/otel loads @opentelemetry/api and the channels, not the SDK nor the service', async () => {
    const otel = (await load('otel')) as string[];
    expect(packagesOf(otel).filter((name) => name.startsWith('@opentelemetry/'))).toEqual(['@opentelemetry/api']);
    expect(otel).toContain('src/tracing.ts');
    for (const heavy of ['fastify', 'prom-client', 'isolated-vm', '@modelcontextprotocol/sdk', 'services/server.ts']) expect(otel).not.toContain(heavy);
  });
});
