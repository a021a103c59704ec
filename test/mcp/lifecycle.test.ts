import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../src/registry.ts';
import { connectMcpServers, type McpBridge } from '../../src/mcp/index.ts';
import type { ToolExecutionResult, ToolRegistry } from '../../src/tool.ts';
import { fixtureConfig, isAlive, nodeBin, tempDir, waitForStatus } from './helpers.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(servers: Parameters<typeof connectMcpServers>[0]['servers'], extra: { connectTimeoutMs?: number; maxAttempts?: number } = {}) {
  const registry = createToolRegistry();
  const bridge = await connectMcpServers({
    servers,
    registry,
    connectTimeoutMs: extra.connectTimeoutMs ?? 10_000,
    reconnect: { initialDelayMs: 20, maxDelayMs: 100, ...(extra.maxAttempts !== undefined ? { maxAttempts: extra.maxAttempts } : {}) },
  });
  cleanups.push(() => bridge.close());
  return { registry, bridge };
}

const call = (registry: ToolRegistry, name: string, args: unknown = {}) => registry.dispatch({ name, arguments: args });

function pidOf(result: ToolExecutionResult): number {
  if (result.isError) throw new Error(result.error.message);
  return (result.value as { structuredContent: { pid: number } }).structuredContent.pid;
}

describe('MCP server lifecycle', () => {
  it('fails the in-flight call of a server that exits, fails fast while it is down, then reconnects', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const gate = join(dir.path, 'gate');
    await writeFile(gate, 'ok');
    const { registry, bridge } = await start({ fixture: fixtureConfig({ FIXTURE_GATE: gate }) });
    const firstPid = pidOf(await call(registry, 'fixture__stats'));

    await writeFile(gate, 'fail'); // restarts now exit at start-up, holding the server down
    const crashed = await call(registry, 'fixture__crash');
    expect(crashed.isError).toBe(true);
    if (!crashed.isError) return;
    expect(crashed.error.message).toContain('MCP server "fixture" exited during the call to "crash"; it is being restarted: try again shortly.');
    expect(isAlive(firstPid)).toBe(false);

    const down = await waitForStatus(bridge, 'fixture', (s) => s.state === 'reconnecting' && s.failedAttempts >= 2);
    expect(down.tools).toContain('fixture__typed');
    expect(down.lastError).toBeTypeOf('string');
    const fast = await call(registry, 'fixture__typed', { x: 1 });
    expect(fast.isError).toBe(true);
    if (!fast.isError) return;
    expect(fast.error.message).toContain('MCP server "fixture" is not connected (it is reconnecting in the background): try again shortly');

    await writeFile(gate, 'ok');
    await waitForStatus(bridge, 'fixture', (s) => s.state === 'connected');
    expect(pidOf(await call(registry, 'fixture__stats'))).not.toBe(firstPid);
    expect(await call(registry, 'fixture__typed', { x: 3 })).toMatchObject({ isError: false, value: { structuredContent: { x: 3 } } });
  });

  it('re-registers on tools/list_changed: added tools appear, removed ones are disposed', async () => {
    const { registry, bridge } = await start({ fixture: fixtureConfig() });
    expect(registry.get('fixture__extra')).toBeUndefined();

    expect(await call(registry, 'fixture__set_extra', { present: true })).toMatchObject({ isError: false });
    await waitForStatus(bridge, 'fixture', (s) => s.tools.includes('fixture__extra'));
    expect(await call(registry, 'fixture__extra')).toMatchObject({ isError: false, content: [{ type: 'text', text: 'extra here' }] });

    expect(await call(registry, 'fixture__set_extra', { present: false })).toMatchObject({ isError: false });
    await waitForStatus(bridge, 'fixture', (s) => !s.tools.includes('fixture__extra'));
    expect(registry.get('fixture__extra')).toBeUndefined();
    const gone = await call(registry, 'fixture__extra');
    expect(gone.isError && gone.error.info?.code).toBe('UNKNOWN_TOOL');
    expect(registry.get('fixture__typed')).toBeDefined();
  });

  it("cancels a call that runs past the server's timeoutMs (TOOL_TIMEOUT)", async () => {
    const { registry } = await start({ fixture: { ...fixtureConfig(), timeoutMs: 300 } });
    const result = await call(registry, 'fixture__slow');
    expect(result.isError && result.error.info?.code).toBe('TOOL_TIMEOUT');
    expect(await call(registry, 'fixture__stats')).toMatchObject({ isError: false, value: { structuredContent: { cancelled: 1 } } });
  });

  it('on close disposes every bridged tool and stops the stdio child', async () => {
    const { registry, bridge } = await start({ fixture: fixtureConfig() });
    const pid = pidOf(await call(registry, 'fixture__stats'));
    expect(isAlive(pid)).toBe(true);
    await bridge.close();
    expect(isAlive(pid)).toBe(false);
    expect(registry.schemas().filter((schema) => schema.name.startsWith('fixture__'))).toEqual([]);
    expect(bridge.status()[0].state).toBe('closed');
  });

  it('reports servers that fail to connect without holding up the others', async () => {
    const { registry, bridge } = await start(
      {
        good: fixtureConfig(),
        missing: { command: '/nonexistent/mcp-server-that-is-not-there' },
        quitter: { command: nodeBin, args: ['-e', 'process.exit(2)'] },
        off: { ...fixtureConfig(), disabled: true },
      },
      { maxAttempts: 0 },
    );
    const byName = Object.fromEntries(bridge.status().map((status) => [status.name, status]));
    expect(byName.good).toMatchObject({ state: 'connected' });
    expect(byName.missing).toMatchObject({ state: 'down', tools: [], failedAttempts: 1 });
    expect(byName.missing.lastError).toContain('ENOENT');
    expect(byName.quitter).toMatchObject({ state: 'down', tools: [], lastError: 'the server process exited while connecting' });
    expect(byName.off).toMatchObject({ state: 'disabled', tools: [] });
    expect(await call(registry, 'good__typed', { x: 1 })).toMatchObject({ isError: false });
  });

  it('gives up on a server that does not answer within the connect timeout', async () => {
    const { bridge } = await start(
      // Reads stdin (so it exits when the bridge closes it) but never answers.
      { mute: { command: nodeBin, args: ['-e', "process.stdin.resume(); process.stdin.on('end', () => process.exit(0))"] } },
      { connectTimeoutMs: 300, maxAttempts: 0 },
    );
    expect(bridge.status()[0]).toMatchObject({
      state: 'down',
      tools: [],
      lastError: 'connecting timed out: no answer within 300 ms',
    });
  });
});
