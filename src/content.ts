/**
 * Content blocks: what a model reads. The shapes are MCP's, so an MCP
 * CallToolResult maps one to one.
 */
import type { JsonObject } from './json.ts';

export interface TextContent {
  type: 'text';
  text: string;
  _meta?: JsonObject;
}
export interface ImageContent {
  type: 'image';
  /** base64 */
  data: string;
  mimeType: string;
  _meta?: JsonObject;
}
export interface AudioContent {
  type: 'audio';
  /** base64 */
  data: string;
  mimeType: string;
  _meta?: JsonObject;
}
export interface EmbeddedResource {
  type: 'resource';
  resource:
    | { uri: string; mimeType?: string; text: string; _meta?: JsonObject }
    | { uri: string; mimeType?: string; blob: string; _meta?: JsonObject };
  _meta?: JsonObject;
}
export interface ResourceLink {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  _meta?: JsonObject;
}
export type ContentBlock = TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink;

/** Shorthand for `[{ type: 'text', text }]`. */
export function textContent(text: string): ContentBlock[] {
  return [{ type: 'text', text }];
}
