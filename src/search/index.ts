export { createToolSearch, DEFAULT_SEARCH_LIMITS, type SearchableTool, type ToolMatch, type ToolSearch, type ToolSearchLimits } from './tool-search.ts';
export { splitWords, stem, tokenize } from './tokenize.ts';
