import { describe, expect, it } from 'vitest';
import type { ContentBlock } from '../../src/content.ts';
import { renderMcpValue } from '../../src/mcp/render.ts';

describe('renderMcpValue', () => {
  it('flattens text and turns binary and embedded content into short placeholders', () => {
    const content: ContentBlock[] = [
      { type: 'text', text: 'first' },
      { type: 'image', data: Buffer.alloc(1234).toString('base64'), mimeType: 'image/png' },
      { type: 'audio', data: Buffer.alloc(5).toString('base64'), mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'file:///x', text: 'the body is not shown' } },
      { type: 'resource_link', uri: 'file:///y', name: 'y' },
      { type: 'text', text: 'last' },
    ];
    expect(renderMcpValue('srv__t', { content })).toEqual([
      {
        type: 'text',
        text: 'first\n[image image/png, 1234 bytes]\n[audio audio/wav, 5 bytes]\n[resource file:///x]\n[resource link file:///y]\nlast',
      },
    ]);
  });

  it('says so when there is nothing to show', () => {
    expect(renderMcpValue('srv__t', { content: [] })).toEqual([{ type: 'text', text: '(srv__t returned no model-visible content)' }]);
  });

  it('shows structured content as JSON when the server sent no content blocks', () => {
    expect(renderMcpValue('srv__t', { content: [], structuredContent: { a: 1 } })).toEqual([
      { type: 'text', text: '{\n  "a": 1\n}' },
    ]);
  });
});
