/**
 * The defaults the docs state are the ones the code uses: each setting's default column in
 * docs/service.md and SECURITY.md's tables, and the "Default …" of its description in
 * docs/ptc.config.schema.json, read back as numbers (or strings), against the objects that hold
 * the defaults.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../services/config.ts';
import { DEFAULT_RETENTION } from '../../services/retention.ts';
import { DEFAULT_APPROVAL_TTL_MS } from '../../src/code-mode/code-mode.ts';
import { DEFAULT_CODE_MODE_LIMITS } from '../../src/code-mode/limits.ts';
import { DEFAULT_EVENT_CAPS } from '../../src/event-sinks/event-caps.ts';
import { DEFAULT_MAX_OPEN_FILES } from '../../src/event-sinks/jsonl-sink.ts';
import { DEFAULT_LIMITS as DEFAULT_TOOL_LIMITS } from '../../src/tools/limits.ts';
import { DEFAULT_POOL } from '../../src/code-mode/pool-defaults.ts';
import { MIN_DEFAULT_MEMORY_BUDGET_MIB } from '../../sandbox/memory-budget.ts';
import { DEFAULT_TYPECHECK_HEAP_MIB, DEFAULT_TYPECHECK_TIMEOUT_MS, MAX_DEFAULT_TYPECHECK_THREADS } from '../../typings/typecheck-pool.ts';

// The config file has no maxTimeoutMs: its limit is the schema's maximum of timeoutMs.
const configurableLimits = Object.fromEntries(Object.entries(DEFAULT_CODE_MODE_LIMITS).filter(([key]) => key !== 'maxTimeoutMs'));

/** Every setting whose default is a single value, by its path in ptc.config.json. */
const REAL: Record<string, number | string> = {
  workspace: DEFAULTS.workspace,
  dataDir: DEFAULTS.dataDir,
  host: DEFAULTS.host,
  port: DEFAULTS.port,
  runtime: DEFAULTS.runtime,
  mode: DEFAULTS.mode,
  typecheck: DEFAULTS.typecheck,
  logLevel: DEFAULTS.logLevel,
  bodyLimit: DEFAULTS.bodyLimit,
  receiveTimeoutMs: DEFAULTS.receiveTimeoutMs,
  maxConnections: DEFAULTS.maxConnections,
  maxConnectionsPerClient: DEFAULTS.maxConnectionsPerClient,
  writeStallMs: DEFAULTS.writeStallMs,
  maxOutboundMiB: DEFAULTS.maxOutboundMiB,
  maxConnectionOutboundMiB: DEFAULTS.maxConnectionOutboundMiB,
  maxConcurrentRunsPerClient: DEFAULTS.maxConcurrentRunsPerClient,
  maxMcpSessionsPerTenant: DEFAULTS.maxMcpSessionsPerTenant,
  shutdownGraceMs: DEFAULTS.shutdownGraceMs,
  shutdownMarginMs: DEFAULTS.shutdownMarginMs,
  'rateLimit.max': DEFAULTS.rateLimit.max,
  typingsBudget: DEFAULTS.typingsBudget,
  databasePoolSize: DEFAULTS.databasePoolSize,
  approvalTtlMs: DEFAULT_APPROVAL_TTL_MS,
  ...prefixed('limits', { ...configurableLimits, ...DEFAULT_EVENT_CAPS, maxOpenSessionFiles: DEFAULT_MAX_OPEN_FILES }),
  ...prefixed('toolLimits', DEFAULT_TOOL_LIMITS),
  ...prefixed('retention', DEFAULT_RETENTION),
  // `maxActiveRuns` is stated per core: "16 per core".
  ...prefixed('pool', {
    runReserveMiB: DEFAULT_POOL.runReserveMiB,
    maxActiveRuns: DEFAULT_POOL.activeRunsPerCore,
    queueLimit: DEFAULT_POOL.queueLimit,
    queueTimeoutMs: DEFAULT_POOL.queueTimeoutMs,
    sessionIsolates: DEFAULT_POOL.sessionIsolates,
    sessionIsolateIdleMs: DEFAULT_POOL.sessionIsolateIdleMs,
  }),
  ...prefixed('typechecker', { heapMiB: DEFAULT_TYPECHECK_HEAP_MIB, timeoutMs: DEFAULT_TYPECHECK_TIMEOUT_MS }),
};

/** Settings whose default depends on the machine: the bound each one's stated default names. */
const MACHINE_BOUNDS: Record<string, string> = {
  'pool.memoryBudgetMiB': `at least ${MIN_DEFAULT_MEMORY_BUDGET_MIB}`,
  'pool.burstThreads': `at most ${DEFAULT_POOL.maxBurstThreads}`,
  'typechecker.threads': `from 1 to ${MAX_DEFAULT_TYPECHECK_THREADS}`,
};

function prefixed(group: string, defaults: Readonly<Record<string, number>>): Record<string, number> {
  return Object.fromEntries(Object.entries(defaults).map(([key, value]) => [`${group}.${key}`, value]));
}

const UNITS: Record<string, number> = { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 };

/** A stated default as a value: `` `./workspace` `` as the string, `16 MiB` as bytes (but `256 MiB` as 256 for a setting counted in MiB), `30,000 ms` as 30000. */
function valueOf(key: string, text: string): number | string | undefined {
  const quoted = /^`([^`]+)`/.exec(text)?.[1];
  if (quoted !== undefined) return /^\d+$/.test(quoted) ? Number(quoted) : quoted;
  const number = /^([\d,]+)(?: (KiB|MiB|GiB))?/.exec(text);
  if (number === null) return undefined;
  const value = Number(number[1]!.replaceAll(',', ''));
  const unit = number[2];
  return unit === undefined || key.endsWith(unit) ? value : value * UNITS[unit]!;
}

/** docs/service.md's settings table: each row's key (the first when a row names several) and its default column. */
function serviceDocDefaults(): Map<string, string> {
  const doc = readFileSync(new URL('../../docs/service.md', import.meta.url), 'utf8');
  const rows = new Map<string, string>();
  for (const line of doc.split('\n')) {
    const cells = line.split('|');
    const key = /^\| `([\w.$]+)`/.exec(line)?.[1];
    if (key !== undefined && cells.length >= 6) rows.set(key, cells[4]!.trim());
  }
  return rows;
}

/**
 * SECURITY.md's tables of limits: the per-run one (a key of `limits`, its default) and the
 * host-side one (what, its setting, its default); a setting's first row only.
 */
function securityDocDefaults(): Map<string, string> {
  const doc = readFileSync(new URL('../../SECURITY.md', import.meta.url), 'utf8');
  const rows = new Map<string, string>();
  for (const line of doc.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const perRun = cells.length === 5 ? /^`(\w+)`$/.exec(cells[1]!)?.[1] : undefined;
    const hostSide = cells.length === 6 ? /^`([\w.]+)`/.exec(cells[2]!)?.[1] : undefined;
    const key = perRun === undefined ? hostSide : `limits.${perRun}`;
    if (key !== undefined && !rows.has(key)) rows.set(key, perRun === undefined ? cells[3]! : cells[2]!);
  }
  return rows;
}

/** docs/ptc.config.schema.json: each property's description, by its dotted path. */
function schemaDescriptions(): Map<string, string> {
  type Node = { description?: string; properties?: Record<string, Node> };
  const schema = JSON.parse(readFileSync(new URL('../../docs/ptc.config.schema.json', import.meta.url), 'utf8')) as Node;
  const out = new Map<string, string>();
  const visit = (node: Node, path: string): void => {
    if (path !== '' && node.description !== undefined) out.set(path, node.description);
    for (const [key, child] of Object.entries(node.properties ?? {})) visit(child, path === '' ? key : `${path}.${key}`);
  };
  visit(schema, '');
  return out;
}

describe('documented defaults', () => {
  it('docs/service.md states each setting with the default the code uses', () => {
    const documented = serviceDocDefaults();
    const stated = Object.fromEntries(Object.keys(REAL).map((key) => [key, valueOf(key, documented.get(key) ?? '')]));
    expect(stated).toEqual(REAL);
  });

  it('docs/service.md states the bounds of the defaults that depend on the machine', () => {
    const documented = serviceDocDefaults();
    const stated = Object.fromEntries(Object.entries(MACHINE_BOUNDS).map(([key, bound]) => [key, documented.get(key)?.includes(bound) ? bound : documented.get(key)]));
    expect(stated).toEqual(MACHINE_BOUNDS);
  });

  it('SECURITY.md states every per-run limit, and each setting it names, with the default the code uses', () => {
    const documented = securityDocDefaults();
    const keys = Object.keys(REAL).filter((key) => documented.has(key));
    expect(keys).toEqual(expect.arrayContaining(Object.keys(configurableLimits).map((key) => `limits.${key}`)));
    const stated = Object.fromEntries(keys.map((key) => [key, valueOf(key, documented.get(key)!)]));
    expect(stated).toEqual(Object.fromEntries(keys.map((key) => [key, REAL[key]])));
  });

  it('docs/ptc.config.schema.json states each setting with the default the code uses', () => {
    const descriptions = schemaDescriptions();
    const stated = Object.fromEntries(
      Object.keys(REAL).map((key) => {
        const text = /Default (\S.*?)(?:[.;:,] |[.;]?$| \()/.exec(descriptions.get(key) ?? '')?.[1] ?? '';
        return [key, valueOf(key, text)];
      }),
    );
    expect(stated).toEqual(REAL);
  });
});
