import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { CLI_NODE_FLAGS, runCli, serveCli } from '../helpers/serve-cli.ts';
import { fixtureConfig } from '../mcp/helpers.ts';
import { createToolRegistry } from '../../src/registry.ts';
import { startToolSources } from '../../src/tool-source.ts';
import { toolModuleSource } from '../../services/tool-modules.ts';
import { post, tempDir } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '../..');
const NODE = path.join(root, 'node_modules/.bin/node');
const CLI = path.join(root, 'services/cli.ts');
const DEFINE_TOOL = pathToFileURL(path.join(root, 'src/define-tool.ts')).href;

/** A TypeScript tool module (types included: Node strips them) in `dir/tools/crm.ts`, and a config naming it relatively. */
async function projectWithModule(): Promise<string> {
  const dir = await tempDir('ptc-tool-modules-');
  await mkdir(path.join(dir, 'tools'));
  await writeFile(
    path.join(dir, 'tools/crm.ts'),
    `import { defineTool } from ${JSON.stringify(DEFINE_TOOL)};
interface Customer { id: string; name: string }
const customers: Customer[] = [{ id: 'c1', name: 'Ada' }, { id: 'c2', name: 'Grace' }];
export const findCustomer = defineTool({
  name: 'crm_find_customer',
  description: 'Finds a customer by id.',
  parameters: { id: { type: 'string', required: true } },
  output: { schema: { type: 'object', additionalProperties: false, properties: { name: { type: 'string', required: true } } }, render: (_a, v) => [{ type: 'text', text: v.name }] },
  async execute(args) {
    const found: Customer | undefined = customers.find((c) => c.id === args.id);
    if (found === undefined) throw new Error('no such customer');
    return { name: found.name };
  },
});
export const VERSION = 2;
`,
  );
  await writeFile(path.join(dir, 'ptc.config.json'), JSON.stringify({ tools: ['./tools/crm.ts'] }));
  return dir;
}

const ptc = (args: string[], cwd: string) => runCli(args, { cwd });

describe('tool modules in the config', () => {
  it('ptc serve loads a TypeScript module named relative to the config file, and a program calls its tool', async () => {
    const dir = await projectWithModule();
    // Started from elsewhere: the module's path resolves against the config file's folder.
    const served = await serveCli({ cwd: root, args: ['--config', path.join(dir, 'ptc.config.json'), '--workspace', path.join(dir, 'ws'), '--data', path.join(dir, 'data'), '--runtime', 'in-process'] });
    try {
      const response = await post(`${served.url}/v1/run`, { code: `return await tools.crm_find_customer({ id: 'c2' });` });
      const body = (await response.json()) as { isError: boolean; value: { result: unknown } };
      expect(body.isError).toBe(false);
      expect(body.value.result).toEqual({ name: 'Grace' });
      const tools = (await (await fetch(`${served.url}/v1/tools`)).json()) as { tools: { name: string }[] };
      expect(tools.tools.map((tool) => tool.name)).toContain('crm_find_customer');
    } finally {
      await served.stop();
    }
  });

  it('ptc mcp loads the same module: its tool is in the typings and callable from run_code', async () => {
    const dir = await projectWithModule();
    const transport = new StdioClientTransport({
      command: NODE,
      args: [...CLI_NODE_FLAGS, CLI, 'mcp', '--config', path.join(dir, 'ptc.config.json'), '--workspace', path.join(dir, 'ws'), '--data', path.join(dir, 'data'), '--runtime', 'in-process'],
      env: { PATH: process.env.PATH ?? '' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.find((tool) => tool.name === 'run_code')?.description).toContain('crm_find_customer');
      const result = (await client.callTool({ name: 'run_code', arguments: { code: `return (await tools.crm_find_customer({ id: 'c1' })).name;` } })) as CallToolResult;
      expect(result.isError).not.toBe(true);
      expect(JSON.stringify(result.content)).toContain('Ada');
    } finally {
      await client.close();
    }
  });

  it('--tools replaces the config list; a module that fails to load stops the start with its path and the reason', async () => {
    const dir = await projectWithModule();
    await writeFile(path.join(dir, 'tools/broken.ts'), `export const x = ;\n`);
    const broken = await ptc(['tools', '--tools', './tools/broken.ts'], dir);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('module tool source');
    expect(broken.stderr).toContain('broken.ts');
    expect(broken.stdout).toBe('');

    await writeFile(path.join(dir, 'tools/empty.ts'), `export const answer = 42;\n`);
    const empty = await ptc(['tools', '--tools', './tools/empty.ts'], dir);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('exports no tool definition');

    const ok = await ptc(['tools'], dir);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('crm_find_customer\tFinds a customer by id.');
  });

  it('a module whose definition the registry refuses names the tool and the reason', async () => {
    const dir = await projectWithModule();
    // A raw definition clashing with a built-in name.
    await writeFile(
      path.join(dir, 'tools/clash.ts'),
      `export default [{ name: 'read', description: 'x', parameters: { type: 'object' }, output: { schema: {}, render: () => [] }, execute: async () => null }];\n`,
    );
    const clash = await ptc(['typings', '--tools', './tools/clash.ts'], dir);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toMatch(/tool "read" could not be registered: .*already registered/);
  });

  it('a package specifier resolves from the config folder; its default array is registered, and close disposes it', async () => {
    const dir = await tempDir('ptc-tool-package-');
    const pkg = path.join(dir, 'node_modules/@acme/tools');
    await mkdir(pkg, { recursive: true });
    await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name: '@acme/tools', type: 'module', exports: { './crm': './crm.js' } }));
    await writeFile(
      path.join(pkg, 'crm.js'),
      `import { defineTool } from ${JSON.stringify(DEFINE_TOOL)};
export default [defineTool({ name: 'acme_ping', description: 'Pings.', parameters: {}, output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] }, execute: async () => 'pong' })];
`,
    );
    const registry = createToolRegistry();
    const sources = await startToolSources([toolModuleSource('@acme/tools/crm', dir)], registry);
    expect(sources.status()).toEqual([{ name: '@acme/tools/crm', kind: 'module', state: 'ready', tools: ['acme_ping'] }]);
    expect(await registry.dispatch({ name: 'acme_ping', arguments: {} })).toMatchObject({ isError: false, value: 'pong' });
    await sources.close();
    expect(registry.get('acme_ping')).toBeUndefined();
    await expect(startToolSources([toolModuleSource('@acme/missing', dir)], registry)).rejects.toThrow(
      /^module tool source "@acme\/missing" could not start: the package could not be resolved from /,
    );
  });

  it('ptc tools exits 1 naming an MCP server that could not start; relative MCP args resolve against the config folder', async () => {
    const dir = await tempDir('ptc-tool-sources-');
    const fixture = fixtureConfig();
    // The temp folder is not an ancestor of the fixture, so its relative path starts with `../`.
    const relative = fixture.args!.map((arg) => path.relative(dir, arg));
    await writeFile(
      path.join(dir, 'ptc.config.json'),
      JSON.stringify({ mcpServers: { fixture: { ...fixture, args: relative }, missing: { command: path.join(dir, 'no-such-server') } } }),
    );
    // Run from another folder: the fixture's relative path still finds it.
    const result = await ptc(['tools', '--config', path.join(dir, 'ptc.config.json')], root);
    expect(result.stdout).toContain('fixture__');
    expect(result.stderr).toContain('mcp source "missing" is degraded');
    expect(result.code).toBe(1);
  });
});
