// A real large spec: GitHub's REST description (@octokit/openapi), about 1,200 operations.
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodeMode, createToolRegistry, type CodeMode } from '../../entries/index.ts';
import { createMemoryEventSink } from '../../src/event-sinks/memory-sink.ts';
import { openApiTools } from '../../src/openapi/index.ts';
import type { ToolRegistry } from '../../src/tool.ts';
import { createCodeModeMcpServer, type CodeModeMcpServer } from '../../services/mcp-embed.ts';
import { createSessionStore } from '../../services/session-store.ts';

const SPEC = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');

let registry: ToolRegistry;
let codeMode: CodeMode;
let mcp: CodeModeMcpServer;
let client: Client;
let count: number;

beforeAll(async () => {
  const sessions = createSessionStore(createMemoryEventSink());
  registry = createToolRegistry({ eventSink: sessions });
  const definitions = await openApiTools({ name: 'github', spec: SPEC, headers: { Authorization: 'Bearer ${env:PTC_TEST_GITHUB_TOKEN}' }, env: { PTC_TEST_GITHUB_TOKEN: 'unused' } });
  count = definitions.length;
  for (const definition of definitions) registry.register(definition);
  codeMode = createCodeMode({ registry });
  mcp = createCodeModeMcpServer({ registry, codeMode, sessions, sessionId: 'github' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(serverSide);
  client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
}, 240_000);

afterAll(async () => {
  await client?.close();
  await mcp?.close();
  await codeMode?.close();
});

/** Each query, as a model might phrase it, and the operation it must find in the top 3. */
const QUERIES: [string, string][] = [
  ['create an issue in a repository', 'github__issues_create'],
  ['list the files changed in a pull request', 'github__pulls_list_files'],
  ['merge a pull request', 'github__pulls_merge'],
  ['list check runs for a git reference', 'github__checks_list_for_ref'],
  ['delete a repository', 'github__repos_delete'],
  ['create a comment on an issue', 'github__issues_create_comment'],
  ['list the repositories of an organization', 'github__repos_list_for_org'],
  ['create a webhook for a repository', 'github__repos_create_webhook'],
  ['get the contents of a file in a repository', 'github__repos_get_content'],
  ['create or update a file in a repository', 'github__repos_create_or_update_file_contents'],
  ['list workflow runs of a repository', 'github__actions_list_workflow_runs_for_repo'],
  ['trigger a workflow dispatch event', 'github__actions_create_workflow_dispatch'],
  ['create a release', 'github__repos_create_release'],
  ['search code across repositories', 'github__search_code'],
  ['create a gist', 'github__gists_create'],
  ['add labels to an issue', 'github__issues_add_labels'],
  ['list the commits of a repository', 'github__repos_list_commits'],
  ['fork a repository', 'github__repos_create_fork'],
  ['list the members of an organization', 'github__orgs_list_members'],
  ['list the branches of a repository', 'github__repos_list_branches'],
];

describe("GitHub's REST spec", () => {
  it('loads: one tool per operation, its credentials configured', () => {
    expect(count).toBeGreaterThan(1000);
    expect(registry.get('github__repos_get')).toBeDefined();
    expect(registry.get('github__repos_get')!.isConcurrencySafe({})).toBe(true);
    expect(registry.get('github__repos_delete')!.isConcurrencySafe({})).toBe(false);
  });

  it('in the MCP face its typings stay behind search_tools', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['run_code', 'search_tools']);
    const description = tools[0].description ?? '';
    expect(description).toContain('call `search_tools`');
    expect(description).not.toContain('github__repos_get');
    expect(description.length).toBeLessThan(16_000);
  });

  it('twenty natural-language queries each find the intended operation in the top 3', async () => {
    const misses: string[] = [];
    for (const [query, intended] of QUERIES) {
      const result = (await client.callTool({ name: 'search_tools', arguments: { query, limit: 3 } })) as CallToolResult;
      const found = (result.structuredContent as { tools: { name: string }[] }).tools.map((tool) => tool.name);
      if (!found.includes(intended)) misses.push(`${query} → ${found.join(', ')} (wanted ${intended})`);
    }
    expect(misses).toEqual([]);
  });

  it('search answers the typings of a match, its constraints in doc comments and no credential', async () => {
    const result = (await client.callTool({ name: 'search_tools', arguments: { query: 'create a webhook for a repository', limit: 1 } })) as CallToolResult;
    const [match] = (result.structuredContent as { tools: { name: string; typings: string }[] }).tools;
    expect(match.name).toBe('github__repos_create_webhook');
    expect(match.typings).toMatch(/github__repos_create_webhook: \{\s+\/\*\*[^\n]*\*\/\s+owner: string\s+\/\*\*[^\n]*\*\/\s+repo: string/);
    expect(match.typings).toContain('@format uri');
    expect(match.typings).not.toContain('Authorization');
  });
});
