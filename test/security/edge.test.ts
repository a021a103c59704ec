/**
 * The HTTP edge against a real server on port 0: Host and Origin checks (DNS
 * rebinding), the request-receive timeout (slow bodies), the connection caps
 * per client and in total, and the data folder kept out of the workspace.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertWorkspaceApart, ConfigError, loadConfig } from '../../services/config.ts';
import { createServer } from '../../services/server.ts';
import { startServer, tempDir, type Running } from '../services/helpers.ts';

interface Answer {
  status: number;
  body: { code?: string; value?: { result?: unknown } };
}

/** node:http, because fetch may not set `Host`. */
function request(url: string, options: { method?: string; path: string; headers?: Record<string, string>; body?: unknown }): Promise<Answer> {
  const { hostname, port } = new URL(url);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: hostname,
        port,
        method: options.method ?? 'GET',
        path: options.path,
        agent: false,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? {} : (JSON.parse(text) as Answer['body']) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const run = (url: string, headers: Record<string, string>) => request(url, { method: 'POST', path: '/v1/run', headers, body: { code: 'return 6 * 7' } });

describe('Host and Origin (DNS rebinding)', () => {
  let running: Running;
  let port: string;
  beforeAll(async () => {
    running = await startServer({ allowedHosts: ['ptc.internal'] });
    port = new URL(running.url).port;
  });
  afterAll(() => running.server.close());

  it('refuses a foreign Host with FORBIDDEN_HOST, even with a matching Origin, and runs nothing', async () => {
    const answer = await run(running.url, { host: `evil.example.com:${port}`, origin: `http://evil.example.com:${port}` });
    expect(answer.status).toBe(403);
    expect(answer.body.code).toBe('FORBIDDEN_HOST');
  });

  it('answers the loopback names and the allow-list, with any port', async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST', `ptc.internal:${port}`]) {
      const answer = await run(running.url, { host });
      expect({ host, status: answer.status, result: answer.body.value?.result }).toEqual({ host, status: 200, result: 42 });
    }
  });

  it('refuses a foreign Origin with FORBIDDEN_ORIGIN and accepts the same origin and allowed ones', async () => {
    const host = `127.0.0.1:${port}`;
    expect((await run(running.url, { host, origin: 'http://evil.example.com' })).body.code).toBe('FORBIDDEN_ORIGIN');
    expect((await run(running.url, { host, origin: 'null' })).body.code).toBe('FORBIDDEN_ORIGIN');
    expect((await run(running.url, { host, origin: `http://evil.example.com:${port}` })).body.code).toBe('FORBIDDEN_ORIGIN');
    expect((await run(running.url, { host, origin: `http://localhost:${port}` })).status).toBe(200);
    expect((await run(running.url, { host, origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect((await run(running.url, { host, origin: 'https://ptc.internal' })).status).toBe(200);
  });

  it('reads the allow-list from PTC_ALLOWED_HOSTS or --allowed-hosts (comma-separated), the flag winning', async () => {
    const cwd = await tempDir();
    expect(loadConfig({ cwd, env: { PTC_ALLOWED_HOSTS: 'a.example, b.example,' } }).allowedHosts).toEqual(['a.example', 'b.example']);
    expect(loadConfig({ cwd, env: { PTC_ALLOWED_HOSTS: 'a.example' }, flags: { allowedHosts: 'c.example' } }).allowedHosts).toEqual(['c.example']);
    expect(loadConfig({ cwd, env: {} }).allowedHosts).toEqual([]);
  });

  it('leaves the probes open: they run nothing', async () => {
    const answer = await request(running.url, { path: '/healthz', headers: { host: 'evil.example.com' } });
    expect(answer.status).toBe(200);
  });
});

/** A raw socket that sends headers, then one body byte per tick, until the server closes it. */
function trickle(port: number): Promise<{ response: string; bytesSent: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let response = '';
    let bytesSent = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      socket.write('POST /v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{');
      timer = setInterval(() => {
        if (socket.writable) socket.write(' ', () => bytesSent++);
      }, 50);
    });
    socket.on('data', (chunk: Buffer) => (response += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ response, bytesSent });
    });
    socket.setTimeout(60_000, () => reject(new Error('the server never dropped the trickling connection')));
  });
}

describe('slow bodies', () => {
  let running: Running;
  beforeAll(async () => {
    running = await startServer({ receiveTimeoutMs: 500 });
  });
  afterAll(() => running.server.close());

  it('drops connections that trickle the body once the receive timeout passes, while runs still complete', async () => {
    const port = Number(new URL(running.url).port);
    const slow = Array.from({ length: 8 }, () => trickle(port));
    const ok = await run(running.url, {});
    const dropped = await Promise.all(slow);
    expect(ok.status).toBe(200);
    for (const { response, bytesSent } of dropped) {
      expect(response).toMatch(/^HTTP\/1\.1 408 /);
      expect(response).toMatch(/\r\nConnection: close\r\n/);
      expect(JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4))).toMatchObject({ statusCode: 408, code: 'REQUEST_TIMEOUT', error: 'Request Timeout' });
      // Closed mid-body: nowhere near the announced million bytes.
      expect(bytesSent).toBeLessThan(1_000_000);
    }
  });

  it('does not cut off a run that outlasts the receive timeout', async () => {
    const answer = await request(running.url, {
      method: 'POST',
      path: '/v1/run',
      // Longer than 500 ms by construction: the run waits on a timer of 1.5 s.
      body: { code: 'await new Promise((r) => setTimeout(r, 1500)); return "late"' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.value?.result).toBe('late');
  });
});

/** Opens a kept-alive socket from `localAddress` and sends one probe: resolves with the first bytes of the answer, or 'closed'. */
function probeSocket(port: number, localAddress: string): Promise<{ socket: net.Socket; outcome: 'answered' | 'closed'; head: string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress });
    socket.on('error', () => undefined);
    socket.on('connect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
    socket.once('data', (chunk: Buffer) => resolve({ socket, outcome: 'answered', head: chunk.toString() }));
    socket.once('close', () => resolve({ socket, outcome: 'closed', head: '' }));
  });
}

describe('connection caps', () => {
  let running: Running;
  beforeAll(async () => {
    running = await startServer({ maxConnectionsPerClient: 3, maxConnections: 5 });
  });
  afterAll(() => running.server.close());
  const openConnections = () => new Promise<number>((resolve, reject) => running.server.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));

  it('refuses connection N+1 of one client while another client still gets in, and caps the total', async () => {
    const port = Number(new URL(running.url).port);
    const first: net.Socket[] = [];
    for (let i = 0; i < 3; i++) {
      const { socket, outcome } = await probeSocket(port, '127.0.0.1');
      expect(outcome).toBe('answered');
      first.push(socket);
    }
    // One more of the same client: answered 503 and closed, never served.
    const fourth = await probeSocket(port, '127.0.0.1');
    expect(fourth.head).toMatch(/^HTTP\/1\.1 503 /);
    expect(fourth.head).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(fourth.head).toMatch(/\r\nconnection: close\r\n/i);
    expect(fourth.head).toContain('"code":"TOO_MANY_CONNECTIONS"');

    // Another client (Linux routes all of 127/8 to loopback).
    const other = [await probeSocket(port, '127.0.0.2'), await probeSocket(port, '127.0.0.2')];
    expect(other.map((o) => o.outcome)).toEqual(['answered', 'answered']);
    // Five open in total: a third client is refused too.
    expect((await probeSocket(port, '127.0.0.3')).outcome).toBe('closed');
    for (const socket of [...first, ...other.map((o) => o.socket), fourth.socket]) socket.destroy();
  });

  it("answers fetch past the client's cap with 503, Retry-After and Connection: close, and counts it in /metrics", async () => {
    const port = Number(new URL(running.url).port);
    // The server has seen the earlier test's sockets close.
    await expect.poll(openConnections).toBe(0);
    const held = await Promise.all([0, 1, 2].map(() => probeSocket(port, '127.0.0.1')));
    expect(held.map((h) => h.outcome)).toEqual(['answered', 'answered', 'answered']);
    // Node's fetch (undici) opens a fresh connection: it reads the refusal, not a reset.
    const refused = await fetch(`${running.url}/v1/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: 'return 1' }) });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('connection')).toBe('close');
    expect(await refused.json()).toMatchObject({ code: 'TOO_MANY_CONNECTIONS' });
    for (const h of held) h.socket.destroy();
    await expect.poll(openConnections).toBe(0);
    const metrics = await (await fetch(`${running.url}/metrics`)).text();
    expect(Number(/^ptc_connections_refused_total\{cap="per-client"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(2);
  });
});

/** Posts bodies of `sizes` MiB from a separate Node process with fetch (undici), one after another; the statuses or fetch's error codes. */
function fetchFromAnotherProcess(url: string, sizes: number[]): Promise<string[]> {
  const script = `
    const out = [];
    for (const mib of ${JSON.stringify(sizes)}) {
      try {
        const response = await fetch(${JSON.stringify(url)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: 'x'.repeat(mib * 1048576) }) });
        const body = await response.json();
        out.push(response.status + ' ' + body.code);
      } catch (error) {
        out.push('fetch failed ' + (error.cause?.code ?? error.message));
      }
    }
    console.log(JSON.stringify(out));`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 }, (error, stdout) => (error === null ? resolve(JSON.parse(stdout) as string[]) : reject(error)));
  });
}

describe('oversize bodies', () => {
  let running: Running;
  beforeAll(async () => {
    running = await startServer();
  });
  afterAll(() => running.server.close());

  it('a Node fetch client reads the 413: the server reads and discards the rest of the body before it closes', async () => {
    // The client is another process, as in real use: in this one, the server's close and the client's writes take turns.
    const answers = await fetchFromAnotherProcess(`${running.url}/v1/run`, [3, 10, 3, 10, 3, 10]);
    expect(answers).toEqual(Array(6).fill('413 BODY_TOO_LARGE'));
  });

  it('a curl-style client (announces the length, reads once it has sent) still reads the 413', async () => {
    const port = Number(new URL(running.url).port);
    const head = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      let text = '';
      socket.on('error', () => undefined);
      socket.on('connect', () => socket.write(`POST /v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${3 * 1048576}\r\n\r\n`));
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
    });
    expect(head).toMatch(/^HTTP\/1\.1 413 /);
    expect(head).toContain('"code":"BODY_TOO_LARGE"');
  });

  it('stops lingering past four times bodyLimit: a client that keeps sending is cut off', async () => {
    const port = Number(new URL(running.url).port);
    const sent = await new Promise<number>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      let bytes = 0;
      const chunk = Buffer.alloc(256 * 1024, 120);
      const pump = () => {
        while (socket.writable && bytes < 64 * 1048576) {
          bytes += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      socket.on('error', () => undefined);
      socket.on('connect', () => {
        socket.write(`POST /v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1048576}\r\n\r\n`);
        pump();
      });
      socket.on('close', () => resolve(bytes));
    });
    // Cut off well before the announced 64 MiB (the bound is 4 MiB after the answer, plus socket buffers).
    expect(sent).toBeLessThan(32 * 1048576);
  });
});

describe('what the server keeps and loads stays out of the workspace', () => {
  it('refuses to start with the data folder inside the workspace', async () => {
    const cwd = await tempDir();
    const config = { ...loadConfig({ cwd, env: {}, flags: { workspace: '.' } }), runtime: 'in-process' as const, logLevel: 'silent' as const, port: 0 };
    expect(config.dataDir).toBe(path.join(cwd, '.ptc'));
    await expect(createServer(config)).rejects.toThrow(ConfigError);
    await expect(createServer(config)).rejects.toThrow(/data folder .* is inside the workspace/);
  });

  it('sees through a symlink that hides the nesting', async () => {
    const cwd = await tempDir();
    await mkdir(path.join(cwd, 'ws'));
    await symlink(path.join(cwd, 'ws'), path.join(cwd, 'link'));
    const config = { ...loadConfig({ cwd, env: {}, flags: { workspace: 'ws', data: 'link/data' } }), runtime: 'in-process' as const, logLevel: 'silent' as const };
    await expect(createServer(config)).rejects.toThrow(ConfigError);
  });

  // Programs write the workspace (the write tool): whatever the server loads at its next start must
  // lie outside it, or a program could run code there with the server's rights.
  const refusal = (what: string) => new RegExp(`${what} .* is inside the workspace .*: a program could change it through the file tools`);
  const serverConfig = (cwd: string, flags: Record<string, string>) =>
    ({ ...loadConfig({ cwd, env: {}, flags }), runtime: 'in-process' as const, logLevel: 'silent' as const, port: 0 });

  it('refuses a workspace holding the config file', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'ptc.config.json'), '{}');
    await expect(createServer(serverConfig(cwd, { workspace: '.', data: path.join(await tempDir(), 'data') }))).rejects.toThrow(refusal('the config file'));
  });

  it('refuses a workspace holding a tool module or an OpenAPI spec file', async () => {
    const cwd = await tempDir();
    await mkdir(path.join(cwd, 'ws'));
    await writeFile(path.join(cwd, 'ptc.config.json'), JSON.stringify({ openapi: { pets: { spec: './ws/pets.json' } } }));
    await expect(createServer(serverConfig(cwd, { workspace: 'ws', tools: './ws/tools.mjs' }))).rejects.toThrow(refusal('the tool module'));
    await expect(createServer(serverConfig(cwd, { workspace: 'ws' }))).rejects.toThrow(refusal('OpenAPI source "pets"\'s spec'));
  });

  it("refuses an MCP server's script in the workspace, not a folder it is given to serve", async () => {
    const cwd = await tempDir();
    await mkdir(path.join(cwd, 'ws'));
    await writeFile(path.join(cwd, 'ws', 'server.mjs'), '');
    const data = path.join(await tempDir(), 'data');
    const withArgs = async (args: string[]) => {
      await writeFile(path.join(cwd, 'ptc.config.json'), JSON.stringify({ mcpServers: { fs: { command: 'node', args } } }));
      return serverConfig(cwd, { workspace: 'ws', data });
    };
    await expect(createServer(await withArgs(['./ws/server.mjs']))).rejects.toThrow(refusal('MCP server "fs"\'s file argument'));
    const servesTheWorkspace = await withArgs(['./server.mjs', './ws']);
    expect(() => assertWorkspaceApart(servesTheWorkspace)).not.toThrow();
  });

  it("refuses a workspace holding ptc-executor's own code", async () => {
    const repository = path.resolve(import.meta.dirname, '../..');
    const config = serverConfig(await tempDir(), { workspace: repository, data: path.join(await tempDir(), 'data') });
    await expect(createServer(config)).rejects.toThrow(refusal("ptc-executor's own code"));
  });

  it('starts with the defaults of a fresh clone (./workspace and ./.ptc side by side)', async () => {
    const running = await startServer();
    try {
      expect(path.relative(running.config.workspace, running.config.dataDir)).toBe('../.ptc');
      expect((await run(running.url, {})).status).toBe(200);
    } finally {
      await running.server.close();
    }
  });
});
