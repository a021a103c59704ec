import { describe, expect, it } from 'vitest';
import { mcpOutputSchema } from '../../src/mcp/index.ts';
import { MCP_CONTENT_SCHEMA } from '../../src/mcp/content-schema.ts';

const content = MCP_CONTENT_SCHEMA;

describe('mcpOutputSchema', () => {
  it('enforces a supported outputSchema on structuredContent, treating root $schema/$id/$comment as annotations', () => {
    const { schema, status } = mcpOutputSchema({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'urn:x',
      $comment: 'generated',
      type: 'object',
      properties: { x: { type: 'number' } },
      required: ['x'],
      additionalProperties: false,
    });
    expect(status).toEqual({ kind: 'enforced' });
    expect(schema).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {
        content,
        structuredContent: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'], additionalProperties: false },
      },
      required: ['content', 'structuredContent'],
    });
  });

  it('falls back to any JSON, described as unvalidated, when the outputSchema is outside the subset', () => {
    const { schema, status } = mcpOutputSchema({
      type: 'object',
      properties: { id: { type: 'string', pattern: '^[a-z]+$' }, n: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
    });
    expect(status.kind).toBe('unvalidated');
    const structured = schema.properties?.structuredContent;
    expect(Object.keys(structured ?? {})).toEqual(['description']);
    expect(structured?.description).toBe(
      "Unvalidated: the server's outputSchema is outside the supported subset (outputSchema.properties.id: `pattern` is not supported; outputSchema.properties.n: `anyOf` is not supported); any JSON.",
    );
    expect(schema.required).toEqual(['content']);
  });

  it('leaves structuredContent optional and open when the tool declares no outputSchema', () => {
    const { schema, status } = mcpOutputSchema(undefined);
    expect(status).toEqual({ kind: 'none' });
    expect(schema.required).toEqual(['content']);
    expect(schema.properties?.structuredContent).toEqual({
      description: 'Structured output, if the server sends any (it declares no outputSchema); any JSON.',
    });
  });
});
