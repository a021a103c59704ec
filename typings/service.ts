/**
 * `createTypingsService`: the TypingsService code mode calls (typings, prompt,
 * type-check), with the typings cached by a hash of the schemas.
 */
import { createHash } from 'node:crypto';
import type { TypecheckBudget, TypecheckDiagnostic, TypingsService } from '../src/code-mode/typings-service.ts';
import type { ToolSchema } from '../src/tool.ts';
import { renderTypings } from './generate.ts';
import { LruCache } from './lru.ts';
import { fingerprint, prepareTools } from './prepare.ts';
import { renderPrompt, type PromptLimits } from './prompt.ts';
import { DEFAULT_SCHEMA_LIMITS, type SchemaLimits } from './safe-schema.ts';
import { createTypecheckPool, type TypecheckPoolOptions } from './typecheck-pool.ts';

export interface TypingsServiceOptions {
  /** Bounds applied to untrusted schemas (depth 64, 5,000 nodes a schema, descriptions of 2,000 characters …). */
  limits?: Partial<SchemaLimits>;
  /** Typings kept, one per distinct tool set; the least recently used is dropped past it. Default 32. */
  cacheSize?: number;
  /** Rendered tool entries kept across tool sets (two per tool); the least recently used is dropped past it. Default 2,000. */
  memberCacheSize?: number;
  /** The run limits the prompt states when code mode does not pass the ones it enforces. Default: code mode's defaults. */
  promptLimits?: Partial<PromptLimits>;
  /**
   * The checker's worker threads and budgets (threads: cores − 1, 1 to 4; heap 512 MiB each;
   * 10,000 ms a check at most), and what a check reports (20 diagnostics of up to 2,000 characters).
   */
  typecheck?: TypecheckPoolOptions;
}

export function createTypingsService(options: TypingsServiceOptions = {}): TypingsService {
  const limits: SchemaLimits = { ...DEFAULT_SCHEMA_LIMITS, ...options.limits };
  const typingsCache = new LruCache<string, Promise<string>>(options.cacheSize ?? 32);
  const rawCache = new LruCache<string, Promise<string>>(options.cacheSize ?? 32);
  const memberCache = new LruCache<string, string>(options.memberCacheSize ?? 2_000);
  // No thread starts until the first check or warm(): with type-checking off, none ever does.
  const checker = createTypecheckPool(options.typecheck);

  function typings(schemas: readonly ToolSchema[]): Promise<string> {
    // Fast path: the very same JSON as a recent call, without sanitising it again.
    const raw = rawKey(schemas);
    const hit = raw === undefined ? undefined : rawCache.get(raw);
    if (hit !== undefined) return hit;
    const pending = generate(schemas);
    if (raw !== undefined) rawCache.set(raw, pending);
    pending.catch(() => raw !== undefined && rawCache.delete(raw));
    return pending;
  }

  function generate(schemas: readonly ToolSchema[]): Promise<string> {
    const tools = prepareTools(schemas, limits);
    const key = fingerprint(tools);
    let pending = typingsCache.get(key);
    if (pending === undefined) {
      // The promise is cached, so concurrent callers share one generation.
      pending = renderTypings(tools, memberCache);
      typingsCache.set(key, pending);
      pending.catch(() => typingsCache.delete(key));
    }
    return pending;
  }

  return {
    typings,
    async prompt(schemas, enforced) {
      return renderPrompt(await typings(schemas), enforced ?? options.promptLimits);
    },
    async check(code: string, schemas: readonly ToolSchema[], budget?: TypecheckBudget): Promise<TypecheckDiagnostic[]> {
      // A new catalogue is a new typings string: the pool sends it to each worker once, at its next check.
      return checker.check(code, await typings(schemas), budget);
    },
    warm: () => checker.warm(),
    close: () => checker.close(),
  };
}

/** sha256 of the input's JSON text; undefined when it has none (a cycle, a throwing getter …). */
function rawKey(schemas: unknown): string | undefined {
  try {
    const text = JSON.stringify(schemas);
    return typeof text === 'string' ? createHash('sha256').update(text).digest('hex') : undefined;
  } catch {
    return undefined;
  }
}
