import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodeModeCore, type CodeMode } from '../../src/code-mode/code-mode.ts';
import { createMemoryEventSink, type MemoryEventSink } from '../../src/event-sinks/memory-sink.ts';
import { connectMcpServers, type McpBridge } from '../../src/mcp/index.ts';
import { createToolRegistry } from '../../src/registry.ts';
import type { SandboxRuntime } from '../../src/sandbox-runtime.ts';
import type { ToolRegistry } from '../../src/tool.ts';
import { createInProcessRuntime } from '../../sandbox/in-process-runtime.ts';
import { generateTypings } from '../../typings/generate.ts';
import { renderPrompt } from '../../typings/prompt.ts';
import { createTypingsService } from '../../typings/service.ts';
import { filesystemServer, fixtureConfig, nodeBin, notesWorkspace } from './helpers.ts';

// A run_code program calling the published filesystem server and the fixture server.
let registry: ToolRegistry;
let sink: MemoryEventSink;
let bridge: McpBridge;
let codeMode: CodeMode;
let runtime: SandboxRuntime;
let workspace: string;
let removeWorkspace: () => Promise<void>;

beforeAll(async () => {
  const dir = await notesWorkspace();
  removeWorkspace = dir.remove;
  workspace = dir.path;
  sink = createMemoryEventSink();
  registry = createToolRegistry({ eventSink: sink });
  bridge = await connectMcpServers({
    servers: { fs: { command: nodeBin, args: [filesystemServer, workspace] }, fixture: fixtureConfig() },
    registry,
  });
  runtime = createInProcessRuntime({ warmPoolSize: 1 });
  codeMode = createCodeModeCore({ registry, runtime });
});
afterAll(async () => {
  await codeMode.close();
  await runtime.close();
  await bridge.close();
  await removeWorkspace();
});

describe('run_code calling MCP tools', () => {
  it('content is typed as MCP content blocks: the prompt\'s idiom type-checks, a field read without narrowing does not', async () => {
    const typings = createTypingsService();
    try {
      const schemas = registry.schemas();
      expect(renderPrompt(await generateTypings(schemas))).toContain('if (block?.type === "text") console.log(block.text);');
      const narrowed = `const r = await tools.fixture__media({}); const [block] = r.content; if (block?.type === "text") return block.text.length; if (block?.type === "image") return block.mimeType;`;
      expect(await typings.check(narrowed, schemas)).toEqual([]);
      const unnarrowed = await typings.check(`const r = await tools.fixture__media({}); return r.content[0].text;`, schemas);
      expect(unnarrowed.map((diagnostic) => diagnostic.message).join('\n')).toContain("Property 'text' does not exist");
    } finally {
      await typings.close?.();
    }
  });

  it('gets canonical values, catches an MCP isError as ToolCallError, and logs only rendered content', async () => {
    const path = join(workspace, 'notes.txt');
    const code = `
      const file = await tools.fs__read_text_file({ path: ${JSON.stringify(path)} });
      const typed = await tools.fixture__typed({ x: 41 });
      let failed = '';
      try {
        await tools.fixture__fail({});
      } catch (error) {
        failed = error.code + ' ' + error.toolName + ': ' + error.message;
      }
      console.log('lines', file.structuredContent.content.split('\\n').length);
      return { text: file.structuredContent.content, next: typed.structuredContent.x + 1, failed };
    `;
    const result = await registry.dispatch({ name: 'run_code', arguments: { code, description: 'read through MCP' }, sessionId: 's1' });
    if (result.isError) throw new Error(result.error.message);
    expect(result.value).toEqual({
      logs: ['lines 3'],
      result: { text: 'alpha\nbeta\n', next: 42, failed: 'TOOL_FAILED fixture__fail: the widget is jammed: unjam it first' },
    });
    const nested = sink.events('s1').filter((event) => event.type === 'tool/ptc-dispatch');
    expect(nested.map((event) => [event.name, event.isError])).toEqual([
      ['fs__read_text_file', false],
      ['fixture__typed', false],
      ['fixture__fail', true],
    ]);
    expect(nested[0]).toMatchObject({ content: [{ type: 'text', text: 'alpha\nbeta\n' }] });
    expect(JSON.stringify(nested)).not.toContain('structuredContent');
  });

  it('gets a big structuredContent whole and deep-frozen (its rows go to the sandbox in slices)', async () => {
    const code = `
      const result = await tools.fixture__rows({ n: 3000 });
      const items = result.structuredContent.items;
      return {
        total: result.structuredContent.total, length: items.length, last: items[2999], text: result.content[0].text,
        frozen: [result, result.structuredContent, items, items[1500], items[1500].tags].every((node) => Object.isFrozen(node)),
      };
    `;
    const result = await registry.dispatch({ name: 'run_code', arguments: { code, description: 'many rows through MCP' }, sessionId: 's2' });
    if (result.isError) throw new Error(result.error.message);
    expect((result.value as { result: unknown }).result).toEqual({
      total: 3000,
      length: 3000,
      last: { id: 2999, name: 'row 2999', tags: ['a', 'odd'] },
      text: '3000 rows',
      frozen: true,
    });
  });

  it('types the stubs from an enforced outputSchema, and an unsupported one as unvalidated JSON', async () => {
    const typings = await generateTypings(registry.schemas());
    expect(typings).toContain('  fs__read_text_file: { content: McpContentBlock[]; structuredContent: { content: string } }\n');
    expect(typings).toContain('type McpContentBlock =\n  | { type: "text"; text: string }\n');
    expect(typings).toContain(
      [
        "  /** Output NOT validated (its outputSchema could not be enforced): check structuredContent's shape first. */",
        '  fixture__loose: {',
        '    content: McpContentBlock[]',
        "    /** Unvalidated: the server's outputSchema is outside the supported subset (outputSchema.properties.id: `pattern` is not supported); any JSON. */",
        '    structuredContent?: UnvalidatedJson',
        '  }',
      ].join('\n'),
    );
  });
});
