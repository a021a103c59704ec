import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpBridge, McpLogger, McpServerStatus, McpStdioServerConfig } from '../../src/mcp/index.ts';

const root = new URL('../..', import.meta.url).pathname;

/** Node 24 from the `node` dependency: fixtures are .ts files run with type stripping. */
export const nodeBin = join(root, 'node_modules/.bin/node');
export const fixtureServer = join(root, 'test/mcp/fixtures/fixture-server.ts');
export const filesystemServer = join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

/** An HTTP handler serving stateless Streamable HTTP MCP: one server from `make` per request. */
export function statelessMcpHandler(make: () => McpServer): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const server = make();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => res.destroy());
  };
}

export function fixtureConfig(env: Record<string, string> = {}): McpStdioServerConfig {
  return { command: nodeBin, args: [fixtureServer], env };
}

/** Resolves with the first status of `server` (current or future) that satisfies `predicate`. */
export function waitForStatus(
  bridge: McpBridge,
  server: string,
  predicate: (status: McpServerStatus) => boolean,
): Promise<McpServerStatus> {
  return new Promise((resolve) => {
    const current = bridge.status().find((status) => status.name === server);
    if (current !== undefined && predicate(current)) {
      resolve(current);
      return;
    }
    const off = bridge.onChange((status) => {
      if (status.name === server && predicate(status)) {
        off();
        resolve(status);
      }
    });
  });
}

/** A logger that records stderr lines from servers and lets a test wait for one. */
export function recordingLogger(): McpLogger & { waitForStderr(text: string): Promise<void> } {
  const waiters: { text: string; resolve(): void }[] = [];
  const ignore = () => undefined;
  return {
    info: ignore,
    warn: ignore,
    error: ignore,
    debug(data) {
      const line = data.line;
      if (typeof line !== 'string') return;
      for (const waiter of [...waiters]) {
        if (line.includes(waiter.text)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    },
    waitForStderr(text) {
      return new Promise((resolve) => waiters.push({ text, resolve }));
    },
  };
}

export async function tempDir(): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'ptc-mcp-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** A temp workspace (its real path) holding notes.txt = "alpha\nbeta\n", for the filesystem server. */
export async function notesWorkspace(): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await tempDir();
  const path = await realpath(dir.path);
  await writeFile(join(path, 'notes.txt'), 'alpha\nbeta\n');
  return { path, remove: dir.remove };
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
