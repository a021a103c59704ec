/**
 * Tool sources: where registered tools come from beside the built-ins (MCP
 * servers, OpenAPI specs, tool modules). Each implements one shape, so the
 * service and the MCP face start, report and close them in one place.
 */
import type { AnyToolDefinition, ToolRegistry } from './tool.ts';

/**
 * `ready`: its tools are registered and callable. `starting`: not yet.
 * `degraded`: it lost its upstream or could not reach it and keeps retrying
 * (its tools fail fast meanwhile). `down`: given up. `closed`: after `close()`.
 */
export type ToolSourceState = 'starting' | 'ready' | 'degraded' | 'down' | 'disabled' | 'closed';

export interface ToolSourceStatus {
  /** The source's configured name (the prefix of its tool names), or a module's path. */
  name: string;
  kind: 'mcp' | 'openapi' | 'module' | (string & {});
  state: ToolSourceState;
  /** Registered tool names, sorted. */
  tools: string[];
  /** Operator-facing: why it is not ready. Never shown to models. */
  error?: string;
}

export interface ToolSource {
  readonly name: string;
  readonly kind: ToolSourceStatus['kind'];
  /**
   * Registers the source's tools on `registry`. Rejects when the source
   * cannot serve at all (a module that does not load, a spec that does not
   * parse); a source that retries on its own (an MCP server) resolves after
   * its first attempt and reports the failure in `status()`.
   */
  start(registry: ToolRegistry): Promise<void>;
  /** Registered tool names, sorted. */
  tools(): string[];
  status(): ToolSourceStatus;
  /** Disposes its tools and releases what it holds (children, connections). */
  close(): Promise<void>;
}

/** Several sources started together: what the service holds. */
export interface ToolSources {
  /** One entry per source, in the order given. */
  status(): ToolSourceStatus[];
  /** The sources that are neither ready nor deliberately disabled, with their error. */
  failures(): ToolSourceStatus[];
  close(): Promise<void>;
}

/**
 * Starts every source in parallel. When one rejects, every source is closed
 * (those that started too) and the first rejection is rethrown: a start
 * never leaves half the tools registered.
 */
export async function startToolSources(sources: readonly ToolSource[], registry: ToolRegistry): Promise<ToolSources> {
  const started = await Promise.allSettled(sources.map((source) => source.start(registry)));
  const rejected = started.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (rejected !== undefined) {
    await Promise.allSettled(sources.map((source) => source.close()));
    throw rejected.reason;
  }
  let closing: Promise<void> | undefined;
  return {
    status: () => sources.map((source) => source.status()),
    failures: () => sources.map((source) => source.status()).filter((status) => status.state !== 'ready' && status.state !== 'disabled'),
    close() {
      closing ??= Promise.allSettled(sources.map((source) => source.close())).then(() => undefined);
      return closing;
    },
  };
}

/** A source failed to start: its name and kind, and the reason, in one message. */
export class ToolSourceError extends Error {
  override name = 'ToolSourceError';
  readonly source: string;
  readonly kind: string;
  constructor(kind: string, source: string, reason: string, options?: { cause?: unknown }) {
    super(`${kind} tool source ${JSON.stringify(source)} could not start: ${reason}`, options);
    this.source = source;
    this.kind = kind;
  }
}

/**
 * A source whose definitions are known once loaded and never change (a tool
 * module, an OpenAPI spec): `load` makes them, `start` registers them all or
 * none, naming the one the registry refused and why.
 */
export function staticToolSource(kind: string, name: string, load: () => Promise<readonly AnyToolDefinition[]>): ToolSource {
  const disposers: (() => void)[] = [];
  let names: string[] = [];
  let state: ToolSourceState = 'starting';
  let error: string | undefined;
  const fail = (reason: string, cause: unknown): never => {
    state = 'down';
    error = reason;
    throw new ToolSourceError(kind, name, reason, { cause });
  };
  return {
    name,
    kind,
    async start(registry) {
      let definitions: readonly AnyToolDefinition[];
      try {
        definitions = await load();
      } catch (cause) {
        return fail(messageOf(cause), cause);
      }
      for (const definition of definitions) {
        try {
          disposers.push(registry.register(definition));
        } catch (cause) {
          for (const dispose of disposers.splice(0)) dispose();
          const label = typeof (definition as { name?: unknown }).name === 'string' ? `tool ${JSON.stringify(definition.name)}` : 'a tool';
          return fail(`${label} could not be registered: ${messageOf(cause)}`, cause);
        }
      }
      names = definitions.map((definition) => definition.name).sort();
      state = 'ready';
    },
    tools: () => [...names],
    status() {
      return { name, kind, state, tools: [...names], ...(error === undefined ? {} : { error }) };
    },
    async close() {
      for (const dispose of disposers.splice(0)) dispose();
      names = [];
      state = 'closed';
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
