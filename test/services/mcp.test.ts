import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { json, post, startServer } from './helpers.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('mcpServers from the config', () => {
  it('bridges each server tool as <server>__<tool>, minus disabledTools', async () => {
    const { url, server } = await startServer({
      mcpServers: { echo: { command: path.join(root, 'node_modules/.bin/node'), args: [path.join(import.meta.dirname, 'fixtures/echo-mcp-server.ts')] } },
      disabledTools: ['echo__hidden', 'write'],
    });
    try {
      const { tools } = await json(fetch(`${url}/v1/tools`));
      const names = tools.map((tool: { name: string }) => tool.name);
      expect(names).toContain('echo__shout');
      expect(names).not.toContain('echo__hidden');
      expect(names).not.toContain('write');
      expect(await (await fetch(`${url}/v1/typings`)).text()).toContain('echo__shout');
      const body = await json(post(`${url}/v1/run`, { code: `return (await tools.echo__shout({ word: 'hi' })).structuredContent.loud;` }));
      expect(body).toMatchObject({ isError: false, value: { result: 'HI' }, stats: { calls: 1 } });
    } finally {
      await server.close();
    }
  });
});
