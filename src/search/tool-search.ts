/**
 * `createToolSearch`: BM25 ranking of tools for a natural-language query, for
 * catalogues too large to show whole. The index is MiniSearch's (BM25+); this
 * file decides what is indexed and how much each field counts: the split-up
 * name most, then the description, then parameter names and descriptions.
 * Pure: no I/O, no SDK.
 */
import MiniSearch from 'minisearch';
import { splitWords, tokenize } from './tokenize.ts';

export interface SearchableTool {
  name: string;
  description?: string;
  /** Top-level parameters: their names and descriptions are indexed too. */
  parameters?: readonly { name: string; description?: string }[];
}

export interface ToolMatch {
  name: string;
  /** BM25+ score; higher is better, comparable only within one search. */
  score: number;
}

export interface ToolSearch {
  /** The best `limit` tools for `query`, best first; [] when nothing matches. */
  search(query: string, limit: number): ToolMatch[];
  readonly size: number;
}

export interface ToolSearchLimits {
  /** Characters of a query read; the rest is ignored. Default 1,000. */
  maxQueryLength: number;
  /** Characters of one tool's indexed text (description, parameters). Default 4,000. */
  maxFieldLength: number;
}

export const DEFAULT_SEARCH_LIMITS: ToolSearchLimits = { maxQueryLength: 1_000, maxFieldLength: 4_000 };

interface Doc {
  id: number;
  words: string;
  description: string;
  parameters: string;
}

const BOOST = { words: 3, description: 1.5, parameters: 1 };

export function createToolSearch(tools: readonly SearchableTool[], limits: Partial<ToolSearchLimits> = {}): ToolSearch {
  const { maxQueryLength, maxFieldLength } = { ...DEFAULT_SEARCH_LIMITS, ...limits };
  const clip = (text: string) => text.slice(0, maxFieldLength);
  const index = new MiniSearch<Doc>({
    fields: ['words', 'description', 'parameters'],
    // Tokenizing (split, lowercase, stop words, stem) is ours, for documents and queries alike.
    tokenize: (text) => tokenize(text),
    processTerm: (term) => term,
    searchOptions: {
      boost: BOOST,
      combineWith: 'OR',
      // "calend" finds "calendar"; short prefixes would match everything.
      prefix: (term) => term.length >= 4,
      fuzzy: false,
    },
  });
  const names: string[] = [];
  index.addAll(
    tools.map((tool, id) => {
      names.push(tool.name);
      return {
        id,
        words: splitWords(tool.name).join(' '),
        description: clip(tool.description ?? ''),
        parameters: clip((tool.parameters ?? []).map((p) => `${p.name} ${p.description ?? ''}`).join(' ')),
      };
    }),
  );

  return {
    size: tools.length,
    search(query, limit) {
      const results = index.search(query.slice(0, maxQueryLength));
      return results.slice(0, Math.max(0, limit)).map((result) => ({ name: names[result.id as number], score: result.score }));
    },
  };
}
