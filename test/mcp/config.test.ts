import { describe, expect, it } from 'vitest';
import { validateMcpServersConfig } from '../../src/mcp/index.ts';

describe('validateMcpServersConfig', () => {
  it('accepts stdio and Streamable HTTP servers in the common mcpServers shape', () => {
    const servers = {
      files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { A: '1' }, cwd: '/tmp' },
      'remote-1': { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer x' }, timeoutMs: 5_000 },
      off: { command: 'x', disabled: true },
    };
    expect(validateMcpServersConfig(servers)).toEqual({ ok: true, servers });
  });

  it('lists every problem with its path and what to write instead', () => {
    const check = validateMcpServersConfig({
      a__b: { command: 'x' },
      both: { command: 'x', url: 'https://x' },
      neither: {},
      bad: { command: '', args: ['ok', 3], env: { A: 1 }, timeoutMs: -1, disabled: 'no', extra: true },
      web: { url: 'ftp://x', headers: 'h' },
      worse: 'npx server',
    });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.errors).toEqual([
      'mcpServers.a__b: server name "a__b" is not allowed: use 1-64 letters, digits, "-" or "_" (never "__", which separates server and tool in tool names)',
      'mcpServers.both must have exactly one of "command" (a stdio server) or "url" (a Streamable HTTP server)',
      'mcpServers.neither must have exactly one of "command" (a stdio server) or "url" (a Streamable HTTP server)',
      'mcpServers.bad.extra is not a known option of a stdio server: use only command, args, env, cwd, timeoutMs, disabled',
      'mcpServers.bad.command must be a non-empty string (the executable to run)',
      'mcpServers.bad.args must be an array of strings',
      'mcpServers.bad.env.A must be a string',
      'mcpServers.bad.timeoutMs must be a whole number of milliseconds from 1 to 3600000',
      'mcpServers.bad.disabled must be true or false',
      'mcpServers.web.url must use http: or https:, not ftp:',
      'mcpServers.web.headers must be an object of string values',
      'mcpServers.worse must be an object such as {"command": "npx", "args": ["-y", "some-server"]} or {"url": "https://…/mcp"}',
    ]);
  });

  it('refuses a non-object and names the root it was given', () => {
    expect(validateMcpServersConfig([], 'config.mcpServers')).toEqual({
      ok: false,
      errors: ['config.mcpServers must be an object of {serverName: {command, args?} | {url, headers?}}'],
    });
  });
});
