/**
 * One MCP server's lifecycle: connect with a deadline, register its tools,
 * follow `tools/list_changed`, fail calls clearly when it dies, reconnect
 * with bounded exponential backoff, and tear everything down on close.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import type { JsonObject } from '../json.ts';
import type { ToolRegistry } from '../tool.ts';
import type { McpServerConfig } from './config.ts';
import type { McpLogger } from './logger.ts';
import { createMcpToolDefinition, mcpOutputSchema, mcpToolName } from './mcp-tool.ts';
import { retryDelayMs } from './backoff.ts';

export type McpServerState = 'connecting' | 'connected' | 'reconnecting' | 'down' | 'disabled' | 'closed';

export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  /**
   * `connected`: tools are callable. `reconnecting`: lost or not yet reached,
   * retrying with backoff (its tools fail fast). `down`: retries exhausted.
   */
  state: McpServerState;
  /** Registered canonical tool names, sorted. */
  tools: string[];
  /** Server tools that could not be registered, with the registry's reason. */
  skippedTools: { name: string; reason: string }[];
  /** Canonical names of tools whose outputSchema is outside the subset (values not validated). */
  unvalidatedOutputs: string[];
  /** Failed connection attempts since the last success. */
  failedAttempts: number;
  /** Operator-facing: why the last attempt failed or the connection dropped. Never shown to models. */
  lastError?: string;
}

export interface McpReconnectOptions {
  /** Delay before the first retry, in ms. Default 500. Doubles after each failure; each delay is drawn from [half, all] of it (jitter). */
  initialDelayMs?: number;
  /** Ceiling of the retry delay, in ms. Default 30,000. */
  maxDelayMs?: number;
  /** Failed attempts in a row before the server is left `down`. Default: unlimited. */
  maxAttempts?: number;
}

export interface McpConnectionOptions {
  name: string;
  config: McpServerConfig;
  registry: ToolRegistry;
  /** Deadline for connecting and listing tools, per attempt, in ms. */
  connectTimeoutMs: number;
  reconnect: Required<McpReconnectOptions>;
  logger: McpLogger;
  onChange(status: McpServerStatus): void;
}

const DEFAULT_CALL_TIMEOUT_MS = 60_000;
const MAX_TOOL_PAGES = 100;
const STDERR_TAIL_LINES = 5;
const CLIENT_INFO = { name: 'ptc-executor', version: '0.1.0' };
const AnyResult = z.unknown();

interface Session {
  client: Client;
  generation: number;
}
interface RegisteredMcpTool {
  fingerprint: string;
  dispose(): void;
}

export class McpConnection {
  readonly name: string;
  private readonly options: McpConnectionOptions;
  private readonly kind: 'stdio' | 'http';
  private readonly callTimeoutMs: number;
  private state: McpServerState = 'connecting';
  private session: Session | undefined;
  private generation = 0;
  private failedAttempts = 0;
  private lastError: string | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private refreshChain: Promise<void> = Promise.resolve();
  private refreshQueued = false;
  private readonly clients = new Set<Client>();
  private readonly registered = new Map<string, RegisteredMcpTool>();
  private skipped: { name: string; reason: string }[] = [];
  private unvalidated = new Set<string>();
  private stderrTail: string[] = [];

  constructor(options: McpConnectionOptions) {
    this.options = options;
    this.name = options.name;
    this.kind = options.config.url !== undefined ? 'http' : 'stdio';
    this.callTimeoutMs = options.config.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    if (options.config.disabled === true) this.state = 'disabled';
  }

  /** First connection attempt; never rejects (a failure is reported in status and retried). */
  async start(): Promise<void> {
    if (this.state === 'disabled') return;
    try {
      await this.connectOnce();
    } catch (error) {
      this.failed(error, 'could not connect');
    }
  }

  status(): McpServerStatus {
    const status: McpServerStatus = {
      name: this.name,
      transport: this.kind,
      state: this.state,
      tools: [...this.registered.keys()].sort(),
      skippedTools: this.skipped.map((entry) => ({ ...entry })),
      unvalidatedOutputs: [...this.unvalidated].sort(),
      failedAttempts: this.failedAttempts,
    };
    if (this.lastError !== undefined) status.lastError = this.lastError;
    return status;
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    clearTimeout(this.retryTimer);
    this.session = undefined;
    for (const name of [...this.registered.keys()]) this.unregister(name);
    await Promise.all([...this.clients].map((client) => client.close().catch(() => undefined)));
    this.clients.clear();
    this.changed();
  }

  // ---------------------------------------------------------------------------
  // Connecting and reconnecting
  // ---------------------------------------------------------------------------

  private async connectOnce(): Promise<void> {
    const generation = ++this.generation;
    const deadline = Date.now() + this.options.connectTimeoutMs;
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    this.clients.add(client);
    client.onclose = () => {
      this.clients.delete(client);
      this.lost(generation);
    };
    client.onerror = (error) => this.options.logger.debug({ server: this.name, err: error.message }, 'MCP transport error');
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refreshTools(generation));
    try {
      await client.connect(this.createTransport(), { timeout: this.options.connectTimeoutMs });
      const tools = await this.listTools(client, () => Math.max(1, deadline - Date.now()));
      if (this.state === 'closed' || generation !== this.generation) throw new Error('superseded');
      this.session = { client, generation };
      this.state = 'connected';
      this.failedAttempts = 0;
      this.syncTools(tools);
      this.options.logger.info({ server: this.name, tools: this.registered.size }, 'MCP server connected');
      this.changed();
    } catch (error) {
      this.clients.delete(client);
      await client.close().catch(() => undefined);
      throw this.describeConnectError(error);
    }
  }

  private describeConnectError(error: unknown): unknown {
    if (!(error instanceof McpError)) return error;
    if (error.code === ErrorCode.ConnectionClosed) {
      return new Error(this.kind === 'stdio' ? 'the server process exited while connecting' : 'the connection closed while connecting');
    }
    if (error.code === ErrorCode.RequestTimeout) {
      return new Error(`connecting timed out: no answer within ${this.options.connectTimeoutMs} ms`);
    }
    return error;
  }

  private createTransport(): Transport {
    const { config } = this.options;
    if (config.url !== undefined) {
      return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers ?? {} } });
    }
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      env: config.env ?? {},
      ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
      stderr: 'pipe',
    });
    this.stderrTail = [];
    let partial = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        this.stderrTail.push(line.slice(0, 500));
        if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
        this.options.logger.debug({ server: this.name, line }, 'MCP server stderr');
      }
    });
    return transport;
  }

  private async listTools(client: Client, timeout: () => number): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeout() });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    return tools;
  }

  /** The client of `generation` closed: if it was the live session, the server is gone. */
  private lost(generation: number): void {
    if (this.state === 'closed' || this.session?.generation !== generation) return;
    this.session = undefined;
    this.failedAttempts = 0;
    this.failed(new Error(this.kind === 'stdio' ? 'the server process exited' : 'the connection closed'), 'lost its connection');
  }

  private failed(error: unknown, what: string): void {
    if (this.state === 'closed') return;
    const tail = this.kind === 'stdio' && this.stderrTail.length > 0 ? ` (stderr: ${this.stderrTail.at(-1)})` : '';
    this.lastError = `${errorMessage(error)}${tail}`;
    this.failedAttempts++;
    const { initialDelayMs, maxDelayMs, maxAttempts } = this.options.reconnect;
    const log = this.failedAttempts === 1 ? 'warn' : 'debug';
    if (this.failedAttempts > maxAttempts) {
      this.state = 'down';
      this.options.logger.warn({ server: this.name, err: this.lastError, attempts: this.failedAttempts }, `MCP server ${what}; giving up`);
      this.changed();
      return;
    }
    const delay = retryDelayMs(this.failedAttempts, { initialDelayMs, maxDelayMs });
    this.state = 'reconnecting';
    this.options.logger[log]({ server: this.name, err: this.lastError, retryInMs: delay }, `MCP server ${what}; retrying`);
    this.retryTimer = setTimeout(() => {
      this.connectOnce().catch((retryError: unknown) => this.failed(retryError, 'could not reconnect'));
    }, delay);
    this.retryTimer.unref();
    this.changed();
  }

  // ---------------------------------------------------------------------------
  // Tools
  // ---------------------------------------------------------------------------

  /** Serialised; a burst of notifications while one refresh waits costs one tools/list. */
  private refreshTools(generation: number): void {
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    this.refreshChain = this.refreshChain.then(async () => {
      this.refreshQueued = false;
      const session = this.session;
      if (session === undefined || session.generation !== generation) return;
      try {
        const tools = await this.listTools(session.client, () => this.options.connectTimeoutMs);
        if (this.session !== session) return;
        this.syncTools(tools);
        this.changed();
      } catch (error) {
        this.options.logger.warn({ server: this.name, err: errorMessage(error) }, 'MCP tools/list after list_changed failed');
      }
    });
  }

  /** Diffs by name: unchanged tools stay, changed ones are disposed and registered again. */
  private syncTools(tools: Tool[]): void {
    const seen = new Set<string>();
    const skipped: { name: string; reason: string }[] = [];
    for (const tool of tools) {
      const name = mcpToolName(this.name, tool.name);
      if (seen.has(name)) {
        skipped.push({ name, reason: 'the server lists this tool name twice' });
        continue;
      }
      seen.add(name);
      const fingerprint = JSON.stringify(tool);
      if (this.registered.get(name)?.fingerprint === fingerprint) continue;
      this.unregister(name);
      const definition = createMcpToolDefinition({
        server: this.name,
        tool,
        timeoutMs: this.callTimeoutMs,
        call: (toolName, args, signal, meta) => this.callTool(toolName, args, signal, meta),
      });
      try {
        this.registered.set(name, { fingerprint, dispose: this.options.registry.register(definition) });
        if (mcpOutputSchema(tool.outputSchema).status.kind === 'unvalidated') this.unvalidated.add(name);
      } catch (error) {
        skipped.push({ name, reason: errorMessage(error) });
        this.options.logger.warn({ server: this.name, tool: name, err: errorMessage(error) }, 'MCP tool not registered');
      }
    }
    for (const name of [...this.registered.keys()]) if (!seen.has(name)) this.unregister(name);
    this.skipped = skipped;
  }

  private unregister(name: string): void {
    const entry = this.registered.get(name);
    if (entry === undefined) return;
    this.registered.delete(name);
    this.unvalidated.delete(name);
    try {
      entry.dispose();
    } catch (error) {
      this.options.logger.warn({ server: this.name, tool: name, err: errorMessage(error) }, 'MCP tool dispose failed');
    }
  }

  // ---------------------------------------------------------------------------
  // Calls
  // ---------------------------------------------------------------------------

  private async callTool(toolName: string, args: JsonObject, signal: AbortSignal, meta?: Readonly<Record<string, string>>): Promise<unknown> {
    const session = this.session;
    if (session === undefined) throw new Error(this.unavailableMessage());
    // The SDK never removes its abort listener; give it a signal of its own so the caller's does not collect them.
    const local = new AbortController();
    const forward = () => local.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener('abort', forward, { once: true });
    try {
      const params = meta === undefined || Object.keys(meta).length === 0 ? { name: toolName, arguments: args } : { name: toolName, arguments: args, _meta: { ...meta } };
      return await session.client.request({ method: 'tools/call', params }, AnyResult, {
        signal: local.signal,
        // A backstop only: the registry's deadline (same value) aborts `signal` first.
        timeout: this.callTimeoutMs + 1_000,
      });
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      const closed = error instanceof McpError && error.code === ErrorCode.ConnectionClosed;
      if (closed || this.session !== session) {
        const gone = this.kind === 'stdio' ? 'exited' : 'disconnected';
        throw new Error(`MCP server "${this.name}" ${gone} during the call to "${toolName}"; it is being restarted: try again shortly.`);
      }
      if (error instanceof McpError) {
        if (error.code === ErrorCode.RequestTimeout) {
          throw new Error(`MCP server "${this.name}" did not answer "${toolName}" within ${this.callTimeoutMs} ms: ask for less work per call.`);
        }
        throw new Error(`MCP server "${this.name}" refused the call to "${toolName}": ${errorMessage(error)}`);
      }
      if (this.kind === 'http') this.drop(session, error);
      throw new Error(`MCP server "${this.name}" could not be reached for "${toolName}"; reconnecting: try again shortly.`);
    } finally {
      signal.removeEventListener('abort', forward);
    }
  }

  /** An HTTP server that stopped answering: forget the session and reconnect. */
  private drop(session: Session, error: unknown): void {
    if (this.session !== session) return;
    this.session = undefined;
    this.failedAttempts = 0;
    this.failed(error, 'stopped answering');
    void session.client.close().catch(() => undefined);
  }

  private unavailableMessage(): string {
    switch (this.state) {
      case 'down':
        return `MCP server "${this.name}" is down and no longer retried: ask an operator to fix or restart it; use another tool meanwhile.`;
      case 'closed':
      case 'disabled':
        return `MCP server "${this.name}" is ${this.state}: its tools cannot be called.`;
      default:
        return `MCP server "${this.name}" is not connected (it is reconnecting in the background): try again shortly or use another tool.`;
    }
  }

  private changed(): void {
    try {
      this.options.onChange(this.status());
    } catch (error) {
      this.options.logger.warn({ server: this.name, err: errorMessage(error) }, 'MCP status listener threw');
    }
  }
}

function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error instanceof McpError) return mcpErrorText(error);
  // fetch failures hide the reason (ECONNREFUSED, ENOTFOUND, …) in `cause`.
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? `${error.message} (${code})` : error.message;
}

/**
 * An McpError's message with its "MCP error <code>: " prefix once. A server built on the SDK sends
 * a message that already carries that prefix, and the client's McpError adds its own.
 */
function mcpErrorText(error: McpError): string {
  return `MCP error ${error.code}: ${error.message.replace(/^(?:MCP error -?\d+: )+/, '')}`;
}
