import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, type PtcConfig } from '../../services/config.ts';
import { createServer, type PtcServer } from '../../services/server.ts';

export interface Running {
  url: string;
  server: PtcServer;
  config: PtcConfig;
}

export async function tempDir(prefix = 'ptc-service-'): Promise<string> {
  return mkdtemp(path.join(tmpdir(), prefix));
}

/** A real server on port 0 with the in-process runtime (fast), temp workspace and data dir. */
export async function startServer(overrides: Partial<PtcConfig> = {}): Promise<Running> {
  const cwd = await tempDir();
  const base = loadConfig({ cwd, env: {} });
  // In-process for speed, and without burst threads (each server would start its own): test/sandbox/burst-threads.test.ts covers them.
  const config: PtcConfig = { ...base, runtime: 'in-process', logLevel: 'silent', port: 0, pool: { ...base.pool, burstThreads: 0 }, ...overrides };
  const server = await createServer(config);
  const url = await server.listen();
  return { url, server, config };
}

export function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

export interface SseEvent {
  event: string;
  data: unknown;
}

/** Parses an SSE response body, calling `onEvent` as each event arrives; resolves with all of them at the end. */
export async function readSse(response: Response, onEvent?: (event: SseEvent) => void): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) name = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (data === '') continue;
      const event = { event: name, data: JSON.parse(data) as unknown };
      events.push(event);
      onEvent?.(event);
    }
  }
  return events;
}

/** Resolves with the `tool/result` event of `callId` once the server's session store has it. */
export function resultEventOf(server: PtcServer, callId: string): Promise<{ isError: boolean; error?: { info?: { code: string } } }> {
  return new Promise((resolve) => {
    const stop = server.core.sessions.watch(callId, (appended) => {
      void Promise.resolve(appended).then((event) => {
        if (event.type === 'tool/result') {
          stop();
          resolve(event);
        }
      });
    });
  });
}

/** A response's JSON body, loosely typed for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function json(response: Response | Promise<Response>): Promise<any> {
  return (await response).json();
}
