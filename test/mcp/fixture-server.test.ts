import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../src/registry.ts';
import { connectMcpServers, type McpBridge } from '../../src/mcp/index.ts';
import type { ToolRegistry } from '../../src/tool.ts';
import { fixtureConfig, recordingLogger, tempDir } from './helpers.ts';

// One real stdio server for the read-mostly stories; lifecycle stories get their own.
let registry: ToolRegistry;
let bridge: McpBridge;
let cwd: { path: string; remove(): Promise<void> };
const logger = recordingLogger();

beforeAll(async () => {
  cwd = await tempDir();
  registry = createToolRegistry();
  const fixture = { ...fixtureConfig({ FIXTURE_MARKER: 'from-config' }), cwd: cwd.path };
  bridge = await connectMcpServers({ servers: { fixture }, registry, logger });
});
afterAll(async () => {
  await bridge.close();
  await cwd.remove();
});

const call = (name: string, args: unknown = {}, signal?: AbortSignal) =>
  registry.dispatch({ name: `fixture__${name}`, arguments: args, ...(signal ? { signal } : {}) });

describe('a bridged MCP server', () => {
  it('registers every server tool as <server>__<tool> and reports it', () => {
    const [status] = bridge.status();
    expect(status).toMatchObject({ name: 'fixture', transport: 'stdio', state: 'connected', failedAttempts: 0 });
    expect(status.tools).toEqual(
      ['crash', 'empty', 'fail', 'loose', 'malformed', 'media', 'refuse', 'rows', 'set_extra', 'slow', 'stats', 'typed'].map((t) => `fixture__${t}`),
    );
    expect(status.unvalidatedOutputs).toEqual(['fixture__loose']);
    const typed = registry.schemas().find((schema) => schema.name === 'fixture__typed');
    expect(typed).toMatchObject({
      description: 'Echoes x and label as structured content (a supported outputSchema).',
      parameters: { type: 'object', properties: { x: {}, label: { type: 'string' } } },
    });
  });

  it('spawns the stdio server with the configured cwd and env', async () => {
    const result = await call('stats');
    expect(result).toMatchObject({ isError: false, value: { structuredContent: { cwd: cwd.path, marker: 'from-config' } } });
  });

  it('takes readOnlyHint as concurrency safety', () => {
    expect(registry.get('fixture__typed')?.isConcurrencySafe({})).toBe(true);
    expect(registry.get('fixture__loose')?.isConcurrencySafe({})).toBe(false);
  });

  it('returns {content, structuredContent} when the structured content matches the outputSchema', async () => {
    const result = await call('typed', { x: 2, label: 'two' });
    expect(result).toMatchObject({
      isError: false,
      value: { content: [{ type: 'text', text: '{"x":2,"label":"two"}' }], structuredContent: { x: 2, label: 'two' } },
      content: [{ type: 'text', text: '{"x":2,"label":"two"}' }],
    });
  });

  it('enforces the outputSchema: a violation names value.structuredContent.<path>', async () => {
    const result = await call('typed', { x: 'not a number' });
    expect(result.isError).toBe(true);
    if (!result.isError) return;
    expect(result.error.info?.code).toBe('INVALID_TOOL_OUTPUT');
    expect(result.error.message).toContain('value.structuredContent.x');
  });

  it('does not pretend to validate an outputSchema outside the subset', async () => {
    const result = await call('loose', { id: 'NOT-lowercase-123' });
    expect(result).toMatchObject({ isError: false, value: { structuredContent: { id: 'NOT-lowercase-123' } } });
    const schema = registry.schemas().find((s) => s.name === 'fixture__loose');
    expect(schema?.output.properties?.structuredContent?.description).toMatch(/^Unvalidated: .*pattern/);
  });

  it('turns isError into a failed result carrying the server text', async () => {
    const result = await call('fail');
    expect(result.isError).toBe(true);
    if (!result.isError) return;
    expect(result.error.message).toContain('the widget is jammed: unjam it first');
    expect(JSON.stringify(result.content)).toContain('the widget is jammed: unjam it first');
    expect(result.value).toBeUndefined();
  });

  it('relays a JSON-RPC error from the server with its MCP error code once', async () => {
    const result = await call('refuse');
    expect(result.isError).toBe(true);
    if (!result.isError) return;
    expect(result.error.message).toBe('MCP server "fixture" refused the call to "refuse": MCP error -32602: x is missing: send {"x": 1}');
    expect(JSON.stringify(result.content)).not.toContain('MCP error -32602: MCP error');
  });

  it('turns a malformed reply into a failed result, and the server stays usable', async () => {
    const result = await call('malformed');
    expect(result.isError).toBe(true);
    if (!result.isError) return;
    expect(result.error.message).toMatch(/MCP server "fixture" sent a malformed result for "malformed" \(result\.content: .*\)/);
    expect(await call('typed', { x: 1 })).toMatchObject({ isError: false });
  });

  it('renders media as placeholders and empty content as a note', async () => {
    expect((await call('media')).content).toEqual([
      {
        type: 'text',
        text: 'here:\n[image image/png, 1234 bytes]\n[audio audio/wav, 10 bytes]\n[resource file:///x]\n[resource link file:///y]',
      },
    ]);
    expect((await call('empty')).content).toEqual([{ type: 'text', text: '(fixture__empty returned no model-visible content)' }]);
  });

  it('cancels the MCP request when the signal aborts', async () => {
    const controller = new AbortController();
    const started = logger.waitForStderr('fixture: slow started');
    const pending = call('slow', {}, controller.signal);
    await started;
    controller.abort();
    const result = await pending;
    expect(result.isError).toBe(true);
    if (!result.isError) return;
    expect(result.error.info?.code).toBe('ABORTED');
    // The cancellation travels on the same pipe ahead of this call, so the server has seen it.
    expect(await call('stats')).toMatchObject({ isError: false, value: { structuredContent: { cancelled: 1 } } });
  });
});
