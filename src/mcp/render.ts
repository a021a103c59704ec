/**
 * What a model reads of an MCP tool result: text as is, binary and embedded
 * content as short placeholders (the value keeps every block in full).
 */
import type { ContentBlock } from '../content.ts';
import type { JsonValue } from '../json.ts';

/** The canonical value of a bridged MCP tool: its content blocks, and its structured content when it sent any. */
export interface McpToolValue {
  content: readonly ContentBlock[];
  structuredContent?: JsonValue;
}

export function renderMcpValue(toolName: string, value: McpToolValue): ContentBlock[] {
  const parts = value.content.map(describeBlock);
  if (parts.length > 0) return [{ type: 'text', text: parts.join('\n') }];
  if (value.structuredContent !== undefined) return [{ type: 'text', text: JSON.stringify(value.structuredContent, null, 2) }];
  return [{ type: 'text', text: `(${toolName} returned no model-visible content)` }];
}

/** The text of every text block, joined; used for a failure's message. */
export function flattenText(content: readonly ContentBlock[]): string {
  return content
    .map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : undefined))
    .filter((text) => text !== undefined)
    .join('\n');
}

function describeBlock(content: ContentBlock): string {
  // Read loosely: a server may send fields this union does not name.
  const block = content as unknown as JsonValue;
  if (!isObject(block)) return '[unrecognised content]';
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '[text]';
    case 'image':
    case 'audio':
      return `[${block.type} ${typeof block.mimeType === 'string' ? block.mimeType : 'unknown type'}, ${base64Bytes(block.data)} bytes]`;
    case 'resource': {
      const resource = isObject(block.resource) ? block.resource : {};
      return `[resource ${typeof resource.uri === 'string' ? resource.uri : '(no uri)'}]`;
    }
    case 'resource_link':
      return `[resource link ${typeof block.uri === 'string' ? block.uri : '(no uri)'}]`;
    default:
      return `[${typeof block.type === 'string' ? block.type : 'unrecognised'} content]`;
  }
}

function base64Bytes(data: JsonValue | undefined): number {
  if (typeof data !== 'string') return 0;
  const trimmed = data.replace(/\s+/g, '');
  const padding = trimmed.endsWith('==') ? 2 : trimmed.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((trimmed.length * 3) / 4) - padding);
}

function isObject(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
