/** A real temp workspace with the built-in tools registered in a real registry. */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createMemoryEventSink, type MemoryEventSink } from '../../src/event-sinks/memory-sink.ts';
import { createToolRegistry } from '../../src/registry.ts';
import type { ToolExecutionResult, ToolRegistry } from '../../src/tool.ts';
import { createBuiltinTools, type BuiltinToolsOptions } from '../../src/tools/index.ts';

export interface Harness {
  /** The workspace's real path. */
  root: string;
  registry: ToolRegistry;
  sink: MemoryEventSink;
  call(name: string, args: unknown, signal?: AbortSignal): Promise<ToolExecutionResult>;
  /** The value of a successful call; fails the test with the message otherwise. */
  value<T = unknown>(name: string, args: unknown): Promise<T>;
  /** The message of a failed call; fails the test if it succeeded. */
  failure(name: string, args: unknown): Promise<string>;
  text(result: ToolExecutionResult): string;
  file(relative: string, content: string | Uint8Array): Promise<string>;
  dispose(): Promise<void>;
}

export async function makeTempDir(prefix = 'ptc-tools-'): Promise<string> {
  return realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
}

export async function createHarness(options: Omit<BuiltinToolsOptions, 'workspace'> = {}): Promise<Harness> {
  const root = await makeTempDir();
  const sink = createMemoryEventSink();
  const registry = createToolRegistry({ eventSink: sink });
  for (const tool of createBuiltinTools({ workspace: root, ...options })) registry.register(tool);
  const call = (name: string, args: unknown, signal?: AbortSignal) =>
    registry.dispatch({ name, arguments: args, ...(signal === undefined ? {} : { signal }) });
  const text = (result: ToolExecutionResult) =>
    result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
  return {
    root,
    registry,
    sink,
    call,
    text,
    async value<T>(name: string, args: unknown) {
      const result = await call(name, args);
      if (result.isError) throw new Error(`expected ${name} to succeed, got: ${result.error.message}`);
      return result.value as T;
    },
    async failure(name: string, args: unknown) {
      const result = await call(name, args);
      if (!result.isError) throw new Error(`expected ${name} to fail, got value ${JSON.stringify(result.value)}`);
      return result.error.message;
    },
    async file(relative, content) {
      const absolute = path.join(root, relative);
      await mkdir(path.dirname(absolute), { recursive: true });
      await writeFile(absolute, content);
      return absolute;
    },
    async dispose() {
      await rm(root, { recursive: true, force: true });
    },
  };
}
