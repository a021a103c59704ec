/**
 * `createToolRegistry`: registration, hooks and the dispatch pipeline.
 */
import type { EventSink } from './events.ts';
import type { ToolRegistry } from './tool.ts';

export interface ToolRegistryOptions {
  /** Receives `tool/result` for outer calls (and nested events from run_code). */
  eventSink?: EventSink;
}

export function createToolRegistry(options: ToolRegistryOptions = {}): ToolRegistry {
  void options;
  throw new Error('not implemented');
}
