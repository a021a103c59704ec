/**
 * What the MCP face shows of the tool catalogue: the whole typings, each
 * tool's own entries, a search index, and run_code's description (the prompt,
 * with the typings when they fit the budget, else telling the model to search).
 * One snapshot per registry state, rebuilt lazily after a change and shared
 * by every MCP session.
 */
import { RUN_CODE } from '../src/code-mode/run-code-tool.ts';
import { createToolSearch, type SearchableTool, type ToolSearch } from '../src/search/index.ts';
import type { ToolRegistry, ToolSchema } from '../src/tool.ts';
import { entriesText, renderEntries, renderTypings } from '../typings/generate.ts';
import { LruCache } from '../typings/lru.ts';
import { prepareTools } from '../typings/prepare.ts';
import { renderPrompt, renderSearchPrompt, type PromptLimits } from '../typings/prompt.ts';

export interface CatalogSnapshot {
  /** The whole `.d.ts`, as `GET /v1/typings` serves it. */
  typings: string;
  /** Tool names, sorted. */
  names: readonly string[];
  /** True when the typings exceed the budget: `search_tools` is offered and the prompt says to search. */
  searchable: boolean;
  /** run_code's description: the model prompt. */
  prompt: string;
  /** One tool's typings (its `ToolArgsMap` and `ToolOutputMap` entries); undefined for an unknown name. */
  toolTypings(name: string): Promise<string | undefined>;
  search: ToolSearch;
}

export interface McpCatalog {
  snapshot(): Promise<CatalogSnapshot>;
  /** Called (coalesced) after the registry's tool set changed. Returns unsubscribe. */
  onChange(listener: () => void): () => void;
  close(): void;
}

export interface McpCatalogOptions {
  registry: ToolRegistry;
  /** The code mode's typings (cached by the typings service). */
  typings(): Promise<string>;
  /** The schemas those typings are made from (`CodeMode.toolSchemas`: gated tools marked `mayPause`). */
  schemas(): readonly ToolSchema[];
  /** run_code's description holds the whole typings up to this many characters. Default 16,000. */
  typingsBudget?: number;
  promptLimits?: Partial<PromptLimits>;
}

export const DEFAULT_TYPINGS_BUDGET = 16_000;

export function createMcpCatalog(options: McpCatalogOptions): McpCatalog {
  const budget = options.typingsBudget ?? DEFAULT_TYPINGS_BUDGET;
  const memberCache = new LruCache<string, string>(4_000);
  const listeners = new Set<() => void>();
  let current: Promise<CatalogSnapshot> | undefined;
  let notifyScheduled = false;

  const offRegistry = options.registry.onChange(() => {
    current = undefined;
    // An upstream reconnecting registers its tools one by one: one notice for the lot.
    if (notifyScheduled) return;
    notifyScheduled = true;
    setImmediate(() => {
      notifyScheduled = false;
      for (const listener of [...listeners]) listener();
    });
  });

  async function build(): Promise<CatalogSnapshot> {
    const schemas = options.schemas().filter((schema) => schema.name !== RUN_CODE);
    const typings = await options.typings();
    const prepared = prepareTools(schemas);
    const byName = new Map(schemas.map((schema) => [schema.name, schema]));
    const searchable = typings.length > budget;
    const prompt = searchable
      ? renderSearchPrompt(await renderTypings([], undefined, prepared), prepared.length, options.promptLimits)
      : renderPrompt(typings, options.promptLimits);
    return {
      typings,
      names: prepared.map((tool) => tool.name),
      searchable,
      prompt,
      async toolTypings(name) {
        const schema = byName.get(name);
        if (schema === undefined) return undefined;
        // Prepared alone: the whole catalogue's node budget, spent in name order, may leave a late tool untyped.
        return entriesText(await renderEntries(prepareTools([schema]), memberCache));
      },
      search: createToolSearch(schemas.map(searchable_)),
    };
  }

  return {
    snapshot() {
      const pending = (current ??= build());
      pending.catch(() => {
        if (current === pending) current = undefined;
      });
      return pending;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      offRegistry();
      listeners.clear();
    },
  };
}

/** A schema as the ranker indexes it: name, description, top-level parameter names and descriptions. */
function searchable_(schema: ToolSchema): SearchableTool {
  const properties = (schema.parameters as { properties?: unknown }).properties;
  const parameters =
    typeof properties === 'object' && properties !== null
      ? Object.entries(properties as Record<string, unknown>).map(([name, node]) => {
          const description = typeof node === 'object' && node !== null ? (node as { description?: unknown }).description : undefined;
          return typeof description === 'string' ? { name, description } : { name };
        })
      : [];
  return { name: schema.name, description: schema.description, parameters };
}
