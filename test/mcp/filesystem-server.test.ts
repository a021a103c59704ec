import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../src/registry.ts';
import { connectMcpServers, type McpBridge } from '../../src/mcp/index.ts';
import type { ToolRegistry } from '../../src/tool.ts';
import { filesystemServer, nodeBin, notesWorkspace } from './helpers.ts';

// The published @modelcontextprotocol/server-filesystem, spawned over stdio.
let registry: ToolRegistry;
let bridge: McpBridge;
let workspace: string;
let removeWorkspace: () => Promise<void>;

beforeAll(async () => {
  const dir = await notesWorkspace();
  removeWorkspace = dir.remove;
  workspace = dir.path;
  registry = createToolRegistry();
  bridge = await connectMcpServers({ servers: { fs: { command: nodeBin, args: [filesystemServer, workspace] } }, registry });
});
afterAll(async () => {
  await bridge.close();
  await removeWorkspace();
});

describe('@modelcontextprotocol/server-filesystem through the bridge', () => {
  it('lists its tools as fs__<tool>', () => {
    const [status] = bridge.status();
    expect(status.state).toBe('connected');
    expect(status.tools).toEqual(expect.arrayContaining(['fs__read_text_file', 'fs__write_file', 'fs__list_directory']));
    expect(status.skippedTools).toEqual([]);
    expect(registry.get('fs__read_text_file')?.isConcurrencySafe({})).toBe(true);
    expect(registry.get('fs__write_file')?.isConcurrencySafe({})).toBe(false);
  });

  it('enforces its ($schema-decorated) outputSchema and returns the file through the registry', async () => {
    const schema = registry.schemas().find((s) => s.name === 'fs__read_text_file');
    expect(schema?.output.properties?.structuredContent).toMatchObject({
      type: 'object',
      properties: { content: { type: 'string' } },
      required: ['content'],
    });
    const result = await registry.dispatch({ name: 'fs__read_text_file', arguments: { path: join(workspace, 'notes.txt') } });
    expect(result).toMatchObject({
      isError: false,
      value: { structuredContent: { content: 'alpha\nbeta\n' } },
      content: [{ type: 'text', text: 'alpha\nbeta\n' }],
    });
  });

  it('turns its refusal of a path outside the workspace into a failed result', async () => {
    const result = await registry.dispatch({ name: 'fs__read_text_file', arguments: { path: '/etc/hostname' } });
    expect(result.isError).toBe(true);
    if (!result.isError) return;
    expect(result.error.message).toMatch(/access denied|outside allowed/i);
  });
});
