import type { ToolSchema } from '../../src/tool.ts';

/** A small tool set covering every rendering rule; the exact output is pinned in generate.test.ts. */
export const SMALL_TOOLS: ToolSchema[] = [
  {
    name: 'read',
    description: 'Read a text file.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Workspace-relative path.' },
        offset: { type: 'integer', description: 'First line, 1-based.', default: 1 },
      },
      required: ['path'],
    },
    output: {
      type: 'object',
      additionalProperties: false,
      properties: { text: { type: 'string' }, lines: { type: 'integer' } },
      required: ['text', 'lines'],
    },
  },
  {
    name: 'my-tool',
    description: 'Exotic name, closed arguments.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      properties: {
        mode: { type: 'string', enum: ['fast', 'slow'] },
        tags: { type: 'array', items: { type: 'string' } },
        value: { oneOf: [{ type: 'string' }, { type: 'null' }] },
        kind: { const: 'x' },
        options: { type: 'object', additionalProperties: true, properties: { deep: { type: 'boolean' } } },
      },
      required: ['mode'],
    },
    output: { description: 'Any JSON.' },
  },
  {
    name: 'mcp_fetch',
    description: 'Fetch a URL (from an MCP server).',
    parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
    output: {
      type: 'object',
      additionalProperties: false,
      properties: {
        content: { type: 'array', items: {} },
        structuredContent: { description: 'Unvalidated: the server advertised an outputSchema outside the supported subset.' },
      },
      required: ['content'],
    },
  },
];
