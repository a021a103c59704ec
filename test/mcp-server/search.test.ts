import { describe, expect, it } from 'vitest';
import { createToolSearch, type SearchableTool } from '../../src/search/index.ts';
import { splitWords, stem, tokenize } from '../../src/search/tokenize.ts';
import { catalogue, SEARCH_QUERIES } from './fixtures/catalogue.ts';

/** The catalogue as the bridge registers it: `<server>__<tool>`, with parameter names and descriptions. */
function indexed(size: number): SearchableTool[] {
  return catalogue(size).map((tool) => ({
    name: `cat__${tool.name}`,
    description: tool.description,
    parameters: Object.entries((tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>).map(([name, p]) => ({
      name,
      ...(p.description === undefined ? {} : { description: p.description }),
    })),
  }));
}

describe('tool search quality', () => {
  const search = createToolSearch(indexed(300));

  it.each(SEARCH_QUERIES)('"%s" finds %s in the top 3', (query, tool) => {
    expect(search.search(query, 3).map((match) => match.name)).toContain(`cat__${tool}`);
  });

  it('has at least 20 queries over a catalogue of 300 distinct tools', () => {
    expect(SEARCH_QUERIES.length).toBeGreaterThanOrEqual(20);
    expect(new Set(indexed(300).map((tool) => tool.name)).size).toBe(300);
  });
});

describe('createToolSearch', () => {
  it('ranks by name words split on __, _, - and camelCase, and by parameter names', () => {
    const search = createToolSearch([
      { name: 'github__listPullRequests', description: 'Lists them.' },
      { name: 'send-mail', description: 'Sends something.' },
      { name: 'weather', description: 'Forecasts.', parameters: [{ name: 'cityName', description: 'Where.' }] },
    ]);
    expect(search.search('pull request', 1)[0].name).toBe('github__listPullRequests');
    expect(search.search('mail', 1)[0].name).toBe('send-mail');
    expect(search.search('city', 1)[0].name).toBe('weather');
  });

  it('returns at most limit results, best first, and nothing for a query of stop words or nothing', () => {
    const search = createToolSearch(indexed(300));
    const found = search.search('create a slack message', 5);
    expect(found).toHaveLength(5);
    expect([...found].sort((a, b) => b.score - a.score)).toEqual(found);
    expect(search.search('the of a', 5)).toEqual([]);
    expect(search.search('', 5)).toEqual([]);
  });

  it('bounds a hostile query: a megabyte of text costs a bounded search', () => {
    const search = createToolSearch(indexed(300));
    expect(search.search(`${'github '.repeat(200_000)}`, 3)).toHaveLength(3);
  });
});

describe('tokenize', () => {
  it('splits identifiers and text, lowercases, drops stop words and stems', () => {
    expect(splitWords('github__create_issue')).toEqual(['github', 'create', 'issue']);
    expect(splitWords('listPullRequests send-mail HTTPServer')).toEqual(['list', 'Pull', 'Requests', 'send', 'mail', 'HTTP', 'Server']);
    expect(tokenize('Listing the created issues')).toEqual(['list', 'creat', 'issu']);
    expect(stem('policies')).toBe('policy');
    expect(stem('status')).toBe('status');
  });
});
