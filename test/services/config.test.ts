import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_FILE_JSON_SCHEMA, configFileSchema } from '../../services/config-schema.ts';
import { ConfigError, isLoopbackHost, loadConfig, parseConfigFile } from '../../services/config.ts';
import { DEFAULT_LIMITS } from '../../src/tools/limits.ts';

async function dirWith(config?: unknown): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ptc-config-'));
  if (config !== undefined) await writeFile(path.join(dir, 'ptc.config.json'), JSON.stringify(config));
  return dir;
}

describe('loadConfig', () => {
  it('has the documented defaults', async () => {
    const cwd = await dirWith();
    const config = loadConfig({ cwd, env: {} });
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 7700,
      runtime: 'process',
      mode: 'code',
      workspace: path.join(cwd, 'workspace'),
      dataDir: path.join(cwd, '.ptc'),
      bodyLimit: 1024 * 1024,
      disabledTools: [],
      mcpServers: {},
    });
    expect(config.token).toBeUndefined();
  });

  it('layers file < env < flags, resolving file paths against the file', async () => {
    const cwd = await dirWith({ port: 8000, host: '127.0.0.2', workspace: 'ws', mode: 'both', limits: { timeoutMs: 5000 } });
    const fromFile = loadConfig({ cwd, env: {} });
    expect(fromFile).toMatchObject({ port: 8000, host: '127.0.0.2', mode: 'both', workspace: path.join(cwd, 'ws'), limits: { timeoutMs: 5000 } });
    const fromEnv = loadConfig({ cwd, env: { PTC_PORT: '8001', PTC_MODE: 'native' } });
    expect(fromEnv).toMatchObject({ port: 8001, mode: 'native', host: '127.0.0.2' });
    const fromFlags = loadConfig({ cwd, env: { PTC_PORT: '8001' }, flags: { port: '0', runtime: 'in-process' } });
    expect(fromFlags).toMatchObject({ port: 0, runtime: 'in-process' });
  });

  it('names every unknown key, nested ones included', async () => {
    const cwd = await dirWith({ prot: 1, limits: { timeotuMs: 5 } });
    expect(() => loadConfig({ cwd, env: {} })).toThrow(ConfigError);
    try {
      loadConfig({ cwd, env: {} });
    } catch (error) {
      expect((error as Error).message).toContain('unknown key "prot" in the root');
      expect((error as Error).message).toContain('unknown key "timeotuMs" in limits');
    }
  });

  it('refuses bad values from env and flags with what to do', async () => {
    const cwd = await dirWith();
    expect(() => loadConfig({ cwd, env: { PTC_PORT: 'http' } })).toThrow(/port "http" is not a port number/);
    expect(() => loadConfig({ cwd, env: {}, flags: { runtime: 'docker' } })).toThrow(/runtime "docker" is not one of in-process, process/);
    expect(() => loadConfig({ cwd, env: { PTC_TOKEN: 'short' } })).toThrow(/shorter than 16 characters/);
  });

  it("refuses the manifests' placeholder token, as the single token and as a tenant's", async () => {
    const placeholder = /the token is the placeholder of deploy\/kubernetes\/secret\.yaml, which anyone can read: set a long random one/;
    const cwd = await dirWith();
    expect(() => loadConfig({ cwd, env: { PTC_TOKEN: 'replace-with-openssl-rand-hex-32' } })).toThrow(placeholder);
    const tenants = await dirWith({ auth: { tokens: [{ name: 'acme', token: 'replace-with-openssl-rand-hex-32' }] } });
    expect(() => loadConfig({ cwd: tenants, env: {} })).toThrow(placeholder);
    expect(loadConfig({ cwd, env: { PTC_TOKEN: 'replace-with-something-else-0123' } }).token).toBe('replace-with-something-else-0123');
  });

  it('takes the token from auth.token and checks mcpServers', async () => {
    const cwd = await dirWith({ auth: { token: 'x'.repeat(20) }, mcpServers: { fs: { command: 'npx', cwd: 'srv' } } });
    const config = loadConfig({ cwd, env: {} });
    expect(config.token).toBe('x'.repeat(20));
    expect(config.mcpServers.fs).toEqual({ command: 'npx', cwd: path.join(cwd, 'srv') });
    const bad = await dirWith({ mcpServers: { fs: { command: 'npx', url: 'http://x' } } });
    expect(() => loadConfig({ cwd: bad, env: {} })).toThrow(/mcpServers\.fs must have exactly one of "command"/);
  });

  it('takes limits.maxArgBytes and refuses one that is not a positive integer', async () => {
    const cwd = await dirWith({ limits: { maxArgBytes: 65_536 } });
    expect(loadConfig({ cwd, env: {} }).limits).toEqual({ maxArgBytes: 65_536 });
    for (const bad of [0, 1.5, '4MiB']) {
      const dir = await dirWith({ limits: { maxArgBytes: bad } });
      expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(/limits\.maxArgBytes must be/);
    }
  });

  it('takes toolLimits, every key of the built-in tools\' limits', async () => {
    expect(Object.keys(configFileSchema.shape.toolLimits.unwrap().shape).sort()).toEqual(Object.keys(DEFAULT_LIMITS).sort());
    expect(loadConfig({ cwd: await dirWith(), env: {} }).toolLimits).toEqual({});
    const cwd = await dirWith({ toolLimits: { maxPatternChars: 200, searchWorkers: 1, readPageLines: 500 } });
    expect(loadConfig({ cwd, env: {} }).toolLimits).toEqual({ maxPatternChars: 200, searchWorkers: 1, readPageLines: 500 });
  });

  it('the configuration table of docs/service.md names every key of the schema, and no other', async () => {
    const doc = await readFile(new URL('../../docs/service.md', import.meta.url), 'utf8');
    const table = doc.slice(doc.indexOf('## Configuration'), doc.indexOf('## API'));
    const documented = table
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...(line.split(' | ')[0] ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1]));
    expect(documented.sort()).toEqual(leafKeys(CONFIG_FILE_JSON_SCHEMA).sort());
  });

  it('docs/ptc.config.schema.json is the JSON Schema the zod schema yields', async () => {
    const published: unknown = JSON.parse(await readFile(new URL('../../docs/ptc.config.schema.json', import.meta.url), 'utf8'));
    // On a difference, regenerate it: node --no-node-snapshot --input-type=module -e "import('./services/config-schema.ts').then(m => process.stdout.write(JSON.stringify(m.CONFIG_FILE_JSON_SCHEMA, null, 2) + '\n'))" > docs/ptc.config.schema.json
    expect(published).toEqual(CONFIG_FILE_JSON_SCHEMA);
  });

  it('names the key path and what it must be for every kind of bad value', () => {
    const cases: [unknown, string][] = [
      [[], 'the root must be object'],
      [{ runtime: 'docker' }, 'runtime must be one of "in-process", "process"'],
      [{ spill: {} }, 'spill.maxInlineBytes is required: add it'],
      [{ auth: { tokens: [] } }, 'auth.tokens must NOT have fewer than 1 items'],
      [{ pool: { runReserveMiB: 0 } }, 'pool.runReserveMiB must be > 0'],
      [{ mcpServers: [] }, 'mcpServers must be object'],
      [{ port: 70_000 }, 'port must be <= 65535'],
      [{ allowedHosts: [''] }, 'allowedHosts.0 must NOT have fewer than 1 characters'],
      [{ auth: { tokens: [{ name: 'Acme', token: 'x'.repeat(16) }] } }, 'auth.tokens.0.name must match pattern "^[a-z0-9]{1,32}$"'],
      [{ rateLimit: { max: 1, burst: 2 } }, 'unknown key "burst" in rateLimit: remove it or use one of: max, timeWindow'],
    ];
    for (const [file, message] of cases) expect(() => parseConfigFile(file), message).toThrow(`invalid ptc.config.json:\n- ${message}`);
  });

  it('refuses a toolLimits value that is not a positive integer in range, naming the key', async () => {
    const cases: [unknown, RegExp][] = [
      [{ maxPatternChars: 0 }, /toolLimits\.maxPatternChars must be >= 1/],
      [{ readPageLines: 1.5 }, /toolLimits\.readPageLines must be integer/],
      [{ maxResults: '100' }, /toolLimits\.maxResults must be integer/],
      [{ searchTimeoutMs: 2 ** 31 }, /toolLimits\.searchTimeoutMs must be <= 2147483647/],
      [{ searchWorkers: 65 }, /toolLimits\.searchWorkers must be <= 64/],
      [{ maxPatternLength: 10 }, /unknown key "maxPatternLength" in toolLimits: remove it or use one of: readPageLines, .*maxPatternChars/],
    ];
    for (const [toolLimits, message] of cases) {
      const cwd = await dirWith({ toolLimits });
      expect(() => loadConfig({ cwd, env: {} })).toThrow(message);
    }
  });

  it('an explicit config file must exist', async () => {
    const cwd = await dirWith();
    expect(() => loadConfig({ cwd, env: { PTC_CONFIG: 'nope.json' } })).toThrow(/does not exist/);
  });

  it('knows loopback hosts', () => {
    expect(['127.0.0.1', 'localhost', '::1', '[::1]', '127.1.2.3'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '::', '10.0.0.1', 'example.com'].some(isLoopbackHost)).toBe(false);
  });
});

type SchemaNode = boolean | { properties?: Record<string, SchemaNode> };

/** `limits.timeoutMs`, …: the keys a config table row documents (objects with named keys are opened). */
function leafKeys(schema: SchemaNode, prefix = ''): string[] {
  if (typeof schema === 'boolean') return [];
  return Object.entries(schema.properties ?? {}).flatMap(([key, node]) =>
    typeof node === 'boolean' || node.properties === undefined ? [`${prefix}${key}`] : leafKeys(node, `${prefix}${key}.`),
  );
}
