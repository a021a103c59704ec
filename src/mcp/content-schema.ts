/**
 * The JSON Schema of a bridged MCP tool's `content`: MCP's content block
 * types. Kept apart from the SDK so the typings can recognise it cheaply.
 */
import type { JsonSchemaNode } from '../schema/types.ts';

/** One MCP content block, discriminated by `type`; open to the fields MCP adds (`annotations`, `_meta`). */
function block(type: string, properties: Record<string, JsonSchemaNode>, required: string[]): JsonSchemaNode {
  return { type: 'object', properties: { type: { const: type }, ...properties }, required: ['type', ...required], additionalProperties: true };
}

const STRING: JsonSchemaNode = { type: 'string' };

/**
 * `content` of a bridged tool's value: MCP's block types, so a program
 * narrows on `type` and reads `text`, `data` or `uri` type-checked. The SDK
 * has already refused any other block when it parsed the result.
 */
export const MCP_CONTENT_SCHEMA: JsonSchemaNode = {
  type: 'array',
  items: {
    oneOf: [
      block('text', { text: STRING }, ['text']),
      block('image', { data: { type: 'string', description: 'base64' }, mimeType: STRING }, ['data', 'mimeType']),
      block('audio', { data: { type: 'string', description: 'base64' }, mimeType: STRING }, ['data', 'mimeType']),
      block('resource_link', { uri: STRING, name: STRING, title: STRING, description: STRING, mimeType: STRING }, ['uri', 'name']),
      block(
        'resource',
        {
          resource: {
            type: 'object',
            properties: { uri: STRING, mimeType: STRING, text: STRING, blob: { type: 'string', description: 'base64' } },
            required: ['uri'],
            additionalProperties: true,
          },
        },
        ['resource'],
      ),
    ],
  },
};

