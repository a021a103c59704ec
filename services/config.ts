/**
 * Configuration: defaults < `ptc.config.json` < environment < flags.
 * Relative paths in the file resolve against the file's folder; relative
 * paths from the environment or flags resolve against the working directory.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as z from 'zod/v4';
import { DEFAULT_APPROVAL_TTL_MS } from '../src/code-mode/code-mode.ts';
import { validateMcpServersConfig, type McpServersConfig } from '../src/mcp/config.ts';
import { DEFAULTS } from './config-defaults.ts';
import { CONFIG_FILE_JSON_SCHEMA, configFileSchema, type ConfigFile, type PtcConfig } from './config-schema.ts';

export { DEFAULTS } from './config-defaults.ts';

export type { PtcConfig, TenantToken, ConfigFile, McpServerConfig, LimitsConfig, ToolLimitsConfig, RuntimeKind, CodeModeKind, LogLevel } from './config-schema.ts';

/** Options given on the command line; each wins over its env var. */
export interface ConfigFlags {
  config?: string;
  port?: string | number;
  host?: string;
  workspace?: string;
  data?: string;
  token?: string;
  allowedHosts?: string;
  runtime?: string;
  mode?: string;
  logLevel?: string;
  typingsBudget?: string | number;
  databaseUrl?: string;
  /** Comma-separated tool modules (paths resolve against the working directory). */
  tools?: string;
}

export const CONFIG_FILE_NAME = 'ptc.config.json';

/** The environment variable behind each flag. */
export const ENV = {
  config: 'PTC_CONFIG',
  port: 'PTC_PORT',
  host: 'PTC_HOST',
  workspace: 'PTC_WORKSPACE',
  data: 'PTC_DATA',
  token: 'PTC_TOKEN',
  allowedHosts: 'PTC_ALLOWED_HOSTS',
  runtime: 'PTC_RUNTIME',
  mode: 'PTC_MODE',
  logLevel: 'PTC_LOG_LEVEL',
  typingsBudget: 'PTC_TYPINGS_BUDGET',
  databaseUrl: 'PTC_DATABASE_URL',
  tools: 'PTC_TOOLS',
} as const;

/** Tokens the repository's manifests carry as placeholders: published, so never accepted. */
export const PLACEHOLDER_TOKENS: readonly string[] = ['replace-with-openssl-rand-hex-32'];

/** A configuration that cannot be used; the message lists every problem. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface LoadConfigOptions {
  flags?: ConfigFlags;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export function loadConfig(options: LoadConfigOptions = {}): PtcConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const flags = options.flags ?? {};
  const pick = (key: keyof typeof ENV): string | undefined => {
    const flag = flags[key];
    if (flag !== undefined && flag !== '') return String(flag);
    const fromEnv = env[ENV[key]];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };

  const { file, dir, path: configFile } = readConfigFile(pick('config'), cwd);
  const fromFile = (p: string | undefined) => (p === undefined ? undefined : path.resolve(dir, p));
  const fromCli = (p: string | undefined) => (p === undefined ? undefined : path.resolve(cwd, p));
  const problems: string[] = [];
  const choices = configFileSchema.shape;

  if (file.token !== undefined && file.auth?.token !== undefined && file.token !== file.auth.token) {
    problems.push('token and auth.token differ: set only one of them');
  }
  const port = pick('port');
  const typingsBudget = pick('typingsBudget');
  const config: PtcConfig = {
    workspace: fromCli(pick('workspace')) ?? fromFile(file.workspace) ?? path.resolve(cwd, DEFAULTS.workspace),
    dataDir: fromCli(pick('data')) ?? fromFile(file.dataDir) ?? path.resolve(cwd, DEFAULTS.dataDir),
    host: pick('host') ?? file.host ?? DEFAULTS.host,
    port: port === undefined ? (file.port ?? DEFAULTS.port) : parsePort(port, problems),
    token: pick('token') ?? file.token ?? file.auth?.token,
    tenants: (file.auth?.tokens ?? []).map((t) => ({ ...t })),
    allowedHosts: parseHostList(pick('allowedHosts')) ?? [...(file.allowedHosts ?? [])],
    receiveTimeoutMs: file.receiveTimeoutMs ?? DEFAULTS.receiveTimeoutMs,
    maxConnections: file.maxConnections ?? DEFAULTS.maxConnections,
    maxConnectionsPerClient: file.maxConnectionsPerClient ?? DEFAULTS.maxConnectionsPerClient,
    writeStallMs: file.writeStallMs ?? DEFAULTS.writeStallMs,
    maxOutboundMiB: file.maxOutboundMiB ?? DEFAULTS.maxOutboundMiB,
    maxConnectionOutboundMiB: file.maxConnectionOutboundMiB ?? DEFAULTS.maxConnectionOutboundMiB,
    runtime: oneOf('runtime', pick('runtime'), choices.runtime.unwrap().options, problems) ?? file.runtime ?? DEFAULTS.runtime,
    mode: oneOf('mode', pick('mode'), choices.mode.unwrap().options, problems) ?? file.mode ?? DEFAULTS.mode,
    typecheck: file.typecheck ?? DEFAULTS.typecheck,
    typechecker: { ...file.typechecker },
    limits: { ...file.limits },
    toolLimits: { ...file.toolLimits },
    pool: { ...file.pool },
    retention: { ...file.retention },
    disabledTools: [...(file.disabledTools ?? [])],
    spill: file.spill,
    bodyLimit: file.bodyLimit ?? DEFAULTS.bodyLimit,
    rateLimit: { ...DEFAULTS.rateLimit, ...file.rateLimit },
    maxConcurrentRunsPerClient: file.maxConcurrentRunsPerClient ?? DEFAULTS.maxConcurrentRunsPerClient,
    maxMcpSessionsPerTenant: file.maxMcpSessionsPerTenant ?? DEFAULTS.maxMcpSessionsPerTenant,
    shutdownGraceMs: file.shutdownGraceMs ?? DEFAULTS.shutdownGraceMs,
    shutdownMarginMs: file.shutdownMarginMs ?? DEFAULTS.shutdownMarginMs,
    logLevel: oneOf('log level', pick('logLevel'), choices.logLevel.unwrap().options, problems) ?? file.logLevel ?? DEFAULTS.logLevel,
    mcpServers: {},
    typingsBudget: typingsBudget === undefined ? (file.typingsBudget ?? DEFAULTS.typingsBudget) : parseBudget(typingsBudget, problems),
    databasePoolSize: file.databasePoolSize ?? DEFAULTS.databasePoolSize,
    configDir: dir,
    ...(configFile === undefined ? {} : { configFile }),
    tools: toolModules(pick('tools'), file.tools, cwd, dir),
    openapi: resolveOpenApiSpecs(file.openapi ?? {}, dir),
    approvals: (file.approvals ?? []).map((rule) => ({ ...rule })),
    approvalTtlMs: file.approvalTtlMs ?? DEFAULT_APPROVAL_TTL_MS,
  };
  const databaseUrl = pick('databaseUrl') ?? file.databaseUrl;
  if (databaseUrl !== undefined) {
    if (/^postgres(ql)?:\/\//.test(databaseUrl)) config.databaseUrl = databaseUrl;
    else problems.push('the database URL must start with postgres:// or postgresql:// (for example postgres://ptc:secret@db:5432/ptc)');
  }
  const mcp = validateMcpServersConfig(file.mcpServers ?? {});
  if (mcp.ok) config.mcpServers = resolveMcpCwds(mcp.servers, dir);
  else problems.push(...mcp.errors);
  if (config.token !== undefined && config.token.length < 16) {
    problems.push('the token is shorter than 16 characters: use a long random string (for example `openssl rand -hex 32`)');
  }
  for (const token of [config.token, ...config.tenants.map((tenant) => tenant.token)]) {
    if (token !== undefined && PLACEHOLDER_TOKENS.includes(token)) {
      problems.push('the token is the placeholder of deploy/kubernetes/secret.yaml, which anyone can read: set a long random one (for example `openssl rand -hex 32`)');
    }
  }
  problems.push(...tenantProblems(config));
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n- ${problems.join('\n- ')}`);
  return config;
}

function readConfigFile(explicit: string | undefined, cwd: string): { file: ConfigFile; dir: string; path?: string } {
  const file = explicit === undefined ? path.join(cwd, CONFIG_FILE_NAME) : path.resolve(cwd, explicit);
  if (!existsSync(file)) {
    if (explicit !== undefined) throw new ConfigError(`config file ${file} does not exist: create it or drop --config`);
    return { file: {}, dir: cwd };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(`config file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  return { file: parseConfigFile(parsed, file), dir: path.dirname(file), path: file };
}

/** Validates a parsed config file; throws {@link ConfigError} listing every problem. */
export function parseConfigFile(value: unknown, source = CONFIG_FILE_NAME): ConfigFile {
  const parsed = configFileSchema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw new ConfigError(`invalid ${source}:\n- ${describeIssues(parsed.error.issues).join('\n- ')}`);
}

interface JsonSchemaNode {
  type?: string;
  properties?: Record<string, JsonSchemaNode>;
  items?: JsonSchemaNode;
}

/** The config file's JSON Schema node at `at` (the key names of objects, the items of arrays), if it has one. */
function jsonSchemaAt(at: readonly PropertyKey[]): JsonSchemaNode | undefined {
  let node: JsonSchemaNode | undefined = CONFIG_FILE_JSON_SCHEMA as JsonSchemaNode;
  for (const key of at) node = typeof key === 'number' ? node?.items : node?.properties?.[String(key)];
  return node;
}

/** Each zod issue as `<key path> must …`, in the words the config file's readers know. */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const out = new Set<string>();
  for (const issue of issues) {
    const where = issue.path.length === 0 ? 'the root' : issue.path.map(String).join('.');
    switch (issue.code) {
      case 'unrecognized_keys': {
        const allowed = Object.keys(jsonSchemaAt(issue.path)?.properties ?? {}).join(', ');
        for (const key of issue.keys) out.add(`unknown key "${key}" in ${where}: remove it or use one of: ${allowed}`);
        break;
      }
      case 'invalid_type':
        out.add(issue.input === undefined ? `${where} is required: add it` : `${where} must be ${jsonSchemaAt(issue.path)?.type ?? issue.expected}`);
        break;
      case 'invalid_value':
        out.add(`${where} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`);
        break;
      case 'too_small':
      case 'too_big': {
        const small = issue.code === 'too_small';
        const bound = small ? issue.minimum : issue.maximum;
        const unit = issue.origin === 'string' ? 'characters' : issue.origin === 'array' ? 'items' : undefined;
        out.add(
          unit === undefined
            ? `${where} must be ${small ? '>' : '<'}${issue.inclusive === false ? '' : '='} ${bound}`
            : `${where} must NOT have ${small ? 'fewer' : 'more'} than ${bound} ${unit}`,
        );
        break;
      }
      case 'invalid_format':
        // zod writes a regex's pattern as /source/; the JSON Schema and the reader know it as source.
        if (issue.format === 'regex' && issue.pattern !== undefined) out.add(`${where} must match pattern ${JSON.stringify(issue.pattern.replace(/^\/|\/$/g, ''))}`);
        else out.add(`${where} must be a ${issue.format}`);
        break;
      default:
        out.add(`${where} is invalid: ${issue.message}`);
    }
  }
  return [...out];
}

function parsePort(value: string, problems: string[]): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    problems.push(`port ${JSON.stringify(value)} is not a port number: use an integer from 0 to 65535`);
    return DEFAULTS.port;
  }
  return port;
}

function parseBudget(value: string, problems: string[]): number {
  const budget = Number(value);
  if (!Number.isInteger(budget) || budget < 0) {
    problems.push(`typings budget ${JSON.stringify(value)} is not a number of characters: use an integer such as 16000`);
    return DEFAULTS.typingsBudget;
  }
  return budget;
}

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], problems: string[]): T | undefined {
  if (value === undefined) return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  problems.push(`${name} ${JSON.stringify(value)} is not one of ${allowed.join(', ')}`);
  return undefined;
}

/**
 * A stdio server's `cwd` resolves against the file's folder; without a `cwd`,
 * so do its arguments that are relative paths (`./server.js`, `../x`), which
 * the child would otherwise read against the working directory.
 */
function resolveMcpCwds(servers: McpServersConfig, dir: string): PtcConfig['mcpServers'] {
  const out: PtcConfig['mcpServers'] = {};
  for (const [name, server] of Object.entries(servers)) {
    if (!('command' in server) || server.command === undefined) out[name] = { ...server };
    else if (server.cwd !== undefined) out[name] = { ...server, cwd: path.resolve(dir, server.cwd) };
    else out[name] = { ...server, ...(server.args === undefined ? {} : { args: server.args.map((arg) => (isRelativePath(arg) ? path.resolve(dir, arg) : arg)) }) };
  }
  return out;
}

function isRelativePath(value: string): boolean {
  return value.startsWith('./') || value.startsWith('../');
}

/** Tool modules: from the flag or env (paths against the working directory), else the file (paths against its folder). */
function toolModules(fromCli: string | undefined, fromFile: readonly string[] | undefined, cwd: string, dir: string): string[] {
  const resolve = (base: string) => (specifier: string) => (specifier.startsWith('.') || path.isAbsolute(specifier) ? path.resolve(base, specifier) : specifier);
  if (fromCli !== undefined) return parseHostList(fromCli)!.map(resolve(cwd));
  return (fromFile ?? []).map(resolve(dir));
}

/** A spec that is not a URL is a path against the file's folder. */
function resolveOpenApiSpecs(sources: NonNullable<ConfigFile['openapi']>, dir: string): PtcConfig['openapi'] {
  const out: PtcConfig['openapi'] = {};
  for (const [name, source] of Object.entries(sources)) {
    out[name] = /^https?:\/\//i.test(source.spec) ? { ...source } : { ...source, spec: path.resolve(dir, source.spec) };
  }
  return out;
}

/** `PTC_ALLOWED_HOSTS` / `--allowed-hosts` (and `--tools`): a comma-separated list. */
function parseHostList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((host) => host.trim())
    .filter((host) => host !== '');
}

function tenantProblems(config: PtcConfig): string[] {
  if (config.tenants.length === 0) return [];
  const problems: string[] = [];
  if (config.token !== undefined) {
    problems.push('both a single token (token, auth.token, PTC_TOKEN or --token) and auth.tokens are set: use one of them');
  }
  const names = new Set<string>();
  const tokens = new Set<string>();
  for (const { name, token } of config.tenants) {
    if (names.has(name)) problems.push(`auth.tokens names tenant "${name}" twice: give each tenant one entry`);
    if (tokens.has(token)) problems.push(`auth.tokens gives two tenants the same token: each tenant needs its own`);
    names.add(name);
    tokens.add(token);
  }
  return problems;
}

/** The folder holding ptc-executor's own code (this module's parent): a program that could write there would change the server. */
const OWN_CODE = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/**
 * Refuses a workspace that holds (or is) anything the server keeps or loads, since programs write
 * the workspace through the file tools: the data folder (they could read and overwrite other
 * sessions' logs), the config file, tool modules, OpenAPI spec files, an MCP server's working
 * folder or file arguments, and ptc-executor's own code (a changed one runs, with the server's
 * rights, at the next start). Symlinks are resolved, so a link cannot hide the nesting.
 * `keepsState: false` (a command that keeps nothing in the data folder) leaves that folder out.
 */
export function assertWorkspaceApart(config: Pick<PtcConfig, 'workspace' | 'dataDir' | 'configFile' | 'tools' | 'openapi' | 'mcpServers'>, keepsState = true): void {
  const workspace = realpathOfNearest(config.workspace);
  const inside = (target: string): boolean => {
    const relative = path.relative(workspace, realpathOfNearest(target));
    return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
  };
  if (keepsState && inside(config.dataDir)) {
    throw new ConfigError(
      `the data folder ${config.dataDir} is inside the workspace ${config.workspace}: programs could read and overwrite session logs. ` +
        'Put it elsewhere (--data / PTC_DATA / dataDir), for example next to the workspace rather than in it',
    );
  }
  const loaded: [string, string][] = [];
  if (config.configFile !== undefined) loaded.push(['the config file', config.configFile]);
  for (const module of config.tools) if (path.isAbsolute(module)) loaded.push(['the tool module', module]);
  for (const [name, source] of Object.entries(config.openapi)) if (path.isAbsolute(source.spec)) loaded.push([`OpenAPI source "${name}"'s spec`, source.spec]);
  for (const [name, server] of Object.entries(config.mcpServers)) {
    if (!('command' in server)) continue;
    if (server.cwd !== undefined) loaded.push([`MCP server "${name}"'s working folder`, server.cwd]);
    // A file argument may be the server's script; a folder (the one a filesystem server serves, say) is data.
    for (const arg of server.args ?? []) if (path.isAbsolute(arg) && isFile(arg)) loaded.push([`MCP server "${name}"'s file argument`, arg]);
  }
  loaded.push(["ptc-executor's own code", OWN_CODE]);
  for (const [what, target] of loaded) {
    if (!inside(target)) continue;
    throw new ConfigError(
      `${what} ${target} is inside the workspace ${config.workspace}: a program could change it through the file tools, and the server would load it at its next start. ` +
        'Point the workspace at a folder of its own (--workspace / PTC_WORKSPACE / workspace), apart from the configuration and the code the server runs',
    );
  }
}

function isFile(target: string): boolean {
  try {
    return statSync(target).isFile();
  } catch {
    return false;
  }
}

/** The real path of `target`, through its nearest existing ancestor (the rest may not exist yet). */
function realpathOfNearest(target: string): string {
  let existing = path.resolve(target);
  const rest: string[] = [];
  while (!existsSync(existing)) {
    const parent = path.dirname(existing);
    if (parent === existing) break;
    rest.unshift(path.basename(existing));
    existing = parent;
  }
  return path.join(realpathSync(existing), ...rest);
}

/** True for hosts that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::ffff:127.0.0.1';
}
