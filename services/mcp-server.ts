/**
 * `createPtcMcpServer`: Code Mode as an MCP server (the SDK's low-level
 * `Server`), for any transport: `ptc mcp` connects it to stdio, `/mcp` to one
 * Streamable HTTP session each. It offers
 * - `run_code`, whose description is the model prompt (with the whole
 *   typings while they fit the budget);
 * - `search_tools`, when they do not: BM25 over the catalogue, answering with
 *   the typings of the best matches;
 * - the typings as resources, `ptc://typings` and `ptc://typings/{tool}`;
 * - a progress notification per nested call start and end, when asked for;
 * - the contexts a run produced (`exec.agent.inject`, post-execute hooks),
 *   as text after the result and under `_meta["ptc-executor/contexts"]`;
 * - cancellation (`notifications/cancelled` aborts the run as
 *   `DELETE /v1/runs/:callId` does), and `tools/list_changed` when the
 *   catalogue changes;
 * - durable runs (mcp-approvals.ts): a gated call asks a client with
 *   elicitation in place; other clients get the paused outcome and answer it
 *   with `decide_run`.
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { CodeMode } from '../src/code-mode/code-mode.ts';
import type { InPlaceApprovers } from '../src/code-mode/in-place-approval.ts';
import { PtcError } from '../src/errors.ts';
import type { ToolEvent } from '../src/events.ts';
import type { JsonValue } from '../src/json.ts';
import type { RunContext } from '../src/run-contexts.ts';
import type { ToolExecutionResult, ToolRegistry } from '../src/tool.ts';
import { executeCall, type CallResponse, type SessionSource, type StatsSource } from './call-runner.ts';
import { HttpError } from './http-errors.ts';
import { canElicit, DECIDE_RUN, DECIDE_RUN_TOOL, elicitingApprover, readDecideArgs } from './mcp-approvals.ts';
import { asExecutionResult } from './routes-calls.ts';
import type { LogRouter } from './log-router.ts';
import type { McpCatalog } from './mcp-catalog.ts';
import type { PtcMetrics } from './metrics.ts';
import type { RunTracker } from './run-tracker.ts';
import type { TenantScope } from './tenancy.ts';
import { incomingTrace } from './trace-context.ts';
import type { TraceContext } from '../src/tracing.ts';

export const SEARCH_TOOLS = 'search_tools';
export const TYPINGS_URI = 'ptc://typings';
const TOOL_URI_PREFIX = `${TYPINGS_URI}/`;
/** Results of one search when the client names no limit, and the most it may ask for. */
export const SEARCH_DEFAULT_LIMIT = 5;
export const SEARCH_MAX_LIMIT = 20;
/** Characters of a search query read; the rest is ignored. */
const MAX_QUERY_LENGTH = 1_000;

export interface PtcMcpServerOptions {
  registry: ToolRegistry;
  sessions: SessionSource;
  catalog: McpCatalog;
  /** Calls in flight (shared with the HTTP routes, so shutdown and `DELETE /v1/runs/:callId` reach MCP runs too). */
  runs: RunTracker;
  /** The session every run of this MCP session is logged under (stored form: with the tenant's prefix). */
  sessionId: string;
  /** The tenant whose ids the runs are stored under. Default: ids as given (one tenant). */
  tenant?: TenantScope;
  /** The key of the per-client concurrency cap. Default: the session id. */
  client?: string;
  logs?: Pick<LogRouter, 'watch'>;
  /** Each run's budgets, for `structuredContent.stats`. Default: the wall time and the calls only. */
  codeMode?: StatsSource;
  metrics?: PtcMetrics;
  /** Server version announced at initialize. Default `0.1.0`. */
  version?: string;
  /** Durable runs: `decide_run`, and approval in place for clients with elicitation. Without it gated calls still pause. */
  durable?: McpDurableOptions;
  /** Asked before each run of `sessionId` (stored form); a throw (an HttpError, such as STORAGE_QUOTA) refuses it as a tool error. Default: every run may start. */
  admit?(sessionId: string): Promise<void>;
  /** A run of `sessionId` ended (retention counts its log again). */
  ran?(sessionId: string): void;
}

export interface McpDurableOptions {
  codeMode: Pick<CodeMode, 'decide' | 'durableStatus'>;
  /** Where this face's runs register their in-place approver (the code mode's `approveInPlace` asks them). */
  approvers?: InPlaceApprovers;
  /** Whether any tool may pause a run now: `decide_run` is listed only then. */
  mayPause(): boolean;
  /** `decide_run` answers only runs of this MCP session (a shared HTTP face); default any run. */
  ownRunsOnly?: boolean;
}

export interface PtcMcpServer {
  readonly server: Server;
  /** Resolves once no tool call is being answered (for a close that lets answers go out first). */
  idle(): Promise<void>;
  /** Tool calls being answered now. */
  readonly answering: number;
  /** Stops listening for catalogue changes. Does not close the transport. */
  dispose(): void;
}

const RUN_CODE_INPUT = {
  type: 'object',
  properties: {
    code: { type: 'string', description: 'The program: the body of an async function (top-level await; `return` sets the result).' },
    description: { type: 'string', description: 'One short line saying what the program does.' },
    timeoutMs: { type: 'integer', minimum: 1, description: 'Wall-time limit in ms, tool calls included. Default: the configured one.' },
  },
  required: ['code'],
} as const;

const RUN_CODE_OUTPUT = {
  type: 'object',
  properties: {
    logs: { type: 'array', items: { type: 'string' }, description: 'Console lines, in order.' },
    result: { description: 'The returned value (JSON); absent when the program returned nothing.' },
    paused: {
      type: 'object',
      description: 'Present when the run paused for approval: { callId, pending: [{ seq, toolName, args }], expiresAt }. Answer it with decide_run.',
    },
    stats: {
      type: 'object',
      description:
        "For the host: the run's wall time, how close it came to its limits (heapPeakBytes/heapLimitBytes, logBytes/maxLogBytes, resultBytes/maxResultBytes, calls/maxCalls) and each nested call's queuedMs, executeMs and bytes (nestedCalls). POST /v1/run's stats, the same fields.",
    },
  },
  required: ['logs'],
} as const;

const SEARCH_INPUT = {
  type: 'object',
  properties: {
    query: { type: 'string', description: 'A few words saying what you need, such as "create a calendar event".' },
    limit: { type: 'integer', minimum: 1, maximum: SEARCH_MAX_LIMIT, description: `Tools to return. Default ${SEARCH_DEFAULT_LIMIT}.` },
  },
  required: ['query'],
} as const;

const SEARCH_OUTPUT = {
  type: 'object',
  properties: {
    tools: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, typings: { type: 'string' } },
        required: ['name', 'typings'],
      },
    },
  },
  required: ['tools'],
} as const;

export function createPtcMcpServer(options: PtcMcpServerOptions): PtcMcpServer {
  const { catalog } = options;
  const server = new Server(
    { name: 'ptc-executor', version: options.version ?? '0.1.0' },
    { capabilities: { tools: { listChanged: true }, resources: { listChanged: true } } },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const snapshot = await catalog.snapshot();
    const tools: Tool[] = [
      {
        name: 'run_code',
        title: 'Run code against the tools',
        description: snapshot.prompt,
        inputSchema: RUN_CODE_INPUT as unknown as Tool['inputSchema'],
        outputSchema: RUN_CODE_OUTPUT as unknown as Tool['outputSchema'],
      },
    ];
    if (snapshot.searchable) {
      tools.push({
        name: SEARCH_TOOLS,
        title: 'Search the tools',
        description:
          `Find the tools run_code programs can call (${snapshot.names.length} in all) by what they do. ` +
          'Returns the TypeScript typings of the best matches (their ToolArgsMap and ToolOutputMap entries, with descriptions). Search before writing code.',
        inputSchema: SEARCH_INPUT as unknown as Tool['inputSchema'],
        outputSchema: SEARCH_OUTPUT as unknown as Tool['outputSchema'],
        annotations: { readOnlyHint: true },
      });
    }
    if (options.durable?.mayPause() === true) tools.push(DECIDE_RUN_TOOL);
    return { tools };
  });

  let answering = 0;
  const idleWaiters: (() => void)[] = [];
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    answering++;
    try {
      return await callTool(request.params, extra);
    } finally {
      if (--answering === 0) for (const resolve of idleWaiters.splice(0)) resolve();
    }
  });

  async function callTool(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: { progressToken?: string | number; traceparent?: unknown; tracestate?: unknown } },
    extra: { signal: AbortSignal; requestId: string | number; sendNotification(notification: ServerNotification): Promise<void> },
  ): Promise<CallToolResult> {
    const args = params.arguments ?? {};
    const token = params._meta?.progressToken;
    const progress: Progress | undefined = token === undefined ? undefined : (step) => extra.sendNotification(progressOf(token, step));
    if (params.name === 'run_code') {
      // A client that can be asked is asked in place, on this request's stream.
      const ask = options.durable?.approvers !== undefined && canElicit(server) ? elicitingApprover(server, 'mcp client', extra.requestId) : undefined;
      return runCode(options, args, extra.signal, progress, ask, incomingTrace(params._meta?.traceparent, params._meta?.tracestate, options.tenant?.name));
    }
    if (params.name === DECIDE_RUN && options.durable !== undefined) return decideRun(options, options.durable, args, extra.signal, progress);
    const { searchable } = await catalog.snapshot();
    if (params.name === SEARCH_TOOLS && searchable) return searchTools(catalog, args);
    return failure(`unknown tool ${JSON.stringify(params.name).slice(0, 300)}: call run_code${searchable ? ' or search_tools' : ''}`);
  }

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [{ uri: TYPINGS_URI, name: 'typings', title: 'Tool typings', description: 'The whole .d.ts of the tools run_code programs call.', mimeType: 'text/x-typescript' }],
  }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: `${TOOL_URI_PREFIX}{tool}`,
        name: 'tool-typings',
        title: 'One tool\'s typings',
        description: 'The ToolArgsMap and ToolOutputMap entries of one tool (its name URI-encoded).',
        mimeType: 'text/x-typescript',
      },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const snapshot = await catalog.snapshot();
    if (uri === TYPINGS_URI) return { contents: [{ uri, mimeType: 'text/x-typescript', text: snapshot.typings }] };
    if (uri.startsWith(TOOL_URI_PREFIX)) {
      const name = decodeName(uri.slice(TOOL_URI_PREFIX.length));
      const text = name === undefined ? undefined : await snapshot.toolTypings(name);
      if (text !== undefined) return { contents: [{ uri, mimeType: 'text/x-typescript', text }] };
    }
    throw protocolError(ErrorCode.InvalidParams, `no resource ${JSON.stringify(uri.slice(0, 300))}: read ${TYPINGS_URI} or ${TOOL_URI_PREFIX}<tool name>`);
  });

  const offCatalog = catalog.onChange(() => {
    if (server.transport === undefined) return;
    // A notice lost on a closing transport is harmless: the client relists on reconnect.
    server.sendToolListChanged().catch(() => undefined);
    server.sendResourceListChanged().catch(() => undefined);
  });

  return {
    server,
    get answering() {
      return answering;
    },
    idle: () => (answering === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve))),
    dispose: offCatalog,
  };
}

type Progress = (step: { progress: number; message: string }) => Promise<void>;

function progressOf(progressToken: string | number, step: { progress: number; message: string }): ServerNotification {
  return { method: 'notifications/progress', params: { progressToken, progress: step.progress, message: step.message } };
}

async function runCode(
  options: PtcMcpServerOptions,
  args: Record<string, unknown>,
  signal: AbortSignal,
  progress: Progress | undefined,
  ask: ReturnType<typeof elicitingApprover> | undefined,
  trace: TraceContext | undefined,
): Promise<CallToolResult> {
  const callArgs: { [key: string]: JsonValue } = {
    ...(args as { [key: string]: JsonValue }),
    description: typeof args.description === 'string' ? args.description : 'MCP run',
  };
  const callId = randomUUID();
  const unregister = ask === undefined ? undefined : options.durable?.approvers?.register(storedCallId(options, callId), ask);
  try {
    const call = { kind: 'code' as const, name: 'run_code', arguments: callArgs, sessionId: options.sessionId, ...(trace === undefined ? {} : { trace }) };
    return await followRun(options, call, callId, signal, progress);
  } finally {
    unregister?.();
  }
}

/** A run's callId as stored: under the tenant's prefix (the client names it without). */
function storedCallId(options: PtcMcpServerOptions, callId: string): string {
  return options.tenant?.inner(callId, 'callId') ?? callId;
}

/** decide_run: answers a paused run and returns the resumed run's outcome like run_code's. */
async function decideRun(
  options: PtcMcpServerOptions,
  durable: McpDurableOptions,
  args: Record<string, unknown>,
  signal: AbortSignal,
  progress: Progress | undefined,
): Promise<CallToolResult> {
  const read = readDecideArgs(args);
  if (typeof read === 'string') return failure(read);
  const { callId, decision } = read;
  // The code mode's messages name the stored id: the client reads its own.
  const shown = (message: string) => options.tenant?.outerMessage(message) ?? message;
  let status;
  try {
    status = await durable.codeMode.durableStatus(storedCallId(options, callId));
  } catch (error) {
    return failure(error instanceof PtcError ? shown(error.message) : 'the paused run could not be read');
  }
  if (status === undefined || (durable.ownRunsOnly === true && status.sessionId !== options.sessionId)) {
    return failure(`no paused run has callId ${JSON.stringify(callId.slice(0, 200))}: pass the callId of a paused run_code result`);
  }
  const notWaiting = (state: string) => failure(`run ${JSON.stringify(callId)} is ${state}, not waiting for a decision; nothing was changed`);
  if (status.status !== 'paused') return notWaiting(status.status);
  const dispatch = async (runSignal: AbortSignal): Promise<ToolExecutionResult> => {
    try {
      return asExecutionResult(await durable.codeMode.decide(storedCallId(options, callId), { ...decision, by: 'mcp client' }, { signal: runSignal }));
    } catch (error) {
      // Another decision won the race, or the journal cannot be read: the client reads why.
      if (error instanceof PtcError) {
        const message = shown(error.message);
        return { isError: true, content: [{ type: 'text', text: message }], error: { message, info: { name: error.name, code: error.code } } };
      }
      throw error;
    }
  };
  const call = { kind: 'code' as const, name: 'run_code', arguments: undefined, sessionId: status.sessionId, dispatch };
  // The callId is taken while another decision's resume runs: this one changes nothing.
  return followRun(options, call, callId, signal, progress, () => notWaiting('being resumed'));
}

/** Runs one outer call as the tracker's run `callId`, with progress notices, and shapes its MCP result. */
async function followRun(
  options: PtcMcpServerOptions,
  call: Omit<Parameters<typeof executeCall>[1], 'run'>,
  callId: string,
  signal: AbortSignal,
  progress: Progress | undefined,
  inUse?: () => CallToolResult,
): Promise<CallToolResult> {
  try {
    await options.admit?.(call.sessionId);
  } catch (error) {
    return failure(refusalOf(error));
  }
  let run;
  try {
    run = options.runs.begin(storedCallId(options, callId), options.client ?? options.sessionId, callId);
  } catch (error) {
    if (inUse !== undefined && (error as { code?: unknown }).code === 'CALL_ID_IN_USE') return inUse();
    return failure((error as Error).message);
  }
  // notifications/cancelled aborts this signal: the run stops as a DELETE /v1/runs/:callId would stop it.
  const onAbort = () => run.cancel('cancelled by notifications/cancelled');
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  const sent: Promise<void>[] = [];
  let step = 0;
  const shown = (callId: string) => options.tenant?.outer(callId) ?? callId;
  const onEvent =
    progress === undefined
      ? undefined
      : (event: ToolEvent) => {
          if (event.type === 'tool/ptc-dispatch-start') sent.push(progress({ progress: ++step, message: `${event.name} started (${shown(event.callId)})` }));
          else if (event.type === 'tool/ptc-dispatch') {
            sent.push(progress({ progress: ++step, message: `${event.name} ${event.isError ? 'failed' : 'done'} (${shown(event.callId)})` }));
          }
        };
  try {
    // The client sees its own ids: contexts and a pause name calls without the tenant's prefix.
    const stored = await executeCall(options, { ...call, run }, onEvent === undefined ? {} : { onEvent });
    const body = options.tenant?.response(stored) ?? stored;
    // Every progress notice goes out before the result it belongs to.
    await Promise.allSettled(sent);
    return withContexts(resultOf(body, options.durable !== undefined), body.contexts);
  } finally {
    signal.removeEventListener('abort', onAbort);
    options.ran?.(call.sessionId);
    run.end();
  }
}

/** Why a run was refused before it started, with the code a client can act on. */
function refusalOf(error: unknown): string {
  if (error instanceof HttpError) return `${error.code}: ${error.message}`;
  return 'DATABASE_UNAVAILABLE: the usage of the session logs could not be read, so this run was not started: retry in a few seconds';
}

/** A run's MCP result; a paused run's text says how to answer it. */
function resultOf(body: CallResponse, decidable: boolean): CallToolResult {
  if (body.isError) return failure(body.error?.message ?? 'the run failed');
  const value = body.value as { logs: string[]; result?: JsonValue };
  const result: CallToolResult = { content: textOf(body.content), structuredContent: { ...value, stats: body.stats } };
  const paused = body.paused as { callId: string } | undefined;
  if (paused !== undefined && decidable) {
    result.content.push({
      type: 'text',
      text: `Ask the user, then call ${DECIDE_RUN} with { "callId": ${JSON.stringify(paused.callId)}, "decision": "approve" | "deny", "reason"? } to resume the run; do not run the program again.`,
    });
  }
  return result;
}

async function searchTools(catalog: McpCatalog, args: Record<string, unknown>): Promise<CallToolResult> {
  const { query, limit } = args;
  if (typeof query !== 'string' || query.trim() === '') return failure('search_tools needs a query: a few words saying what the tool should do');
  if (limit !== undefined && !(Number.isInteger(limit) && (limit as number) >= 1 && (limit as number) <= SEARCH_MAX_LIMIT)) {
    return failure(`limit must be a whole number from 1 to ${SEARCH_MAX_LIMIT}; omit it for ${SEARCH_DEFAULT_LIMIT}`);
  }
  const snapshot = await catalog.snapshot();
  const matches = snapshot.search.search(query.slice(0, MAX_QUERY_LENGTH), (limit as number | undefined) ?? SEARCH_DEFAULT_LIMIT);
  const tools: { name: string; typings: string }[] = [];
  for (const match of matches) {
    const typings = await snapshot.toolTypings(match.name);
    if (typings !== undefined) tools.push({ name: match.name, typings });
  }
  const text =
    tools.length === 0
      ? `No tool matches ${JSON.stringify(query.slice(0, 200))}: try other words.`
      : `${tools.length} best matches, best first. Call them in run_code as tools[name](args).\n\n` +
        tools.map((tool) => `// ${tool.name}\n${tool.typings}`).join('\n');
  return { content: [{ type: 'text', text }], structuredContent: { tools } };
}

/** The `_meta` key under which a run's contexts travel, structured, for a harness that reads them. */
/**
 * A JSON-RPC error for the SDK to send. Not an McpError: its message already
 * begins "MCP error <code>:", and the client's McpError adds that prefix again.
 */
function protocolError(code: ErrorCode, message: string): Error & { code: ErrorCode } {
  return Object.assign(new Error(message), { code });
}

export const CONTEXTS_META_KEY = 'ptc-executor/contexts';

/**
 * A run's contexts ride on its tool result twice: as text blocks after the
 * result's own content (an MCP client puts tool results in front of the next
 * model request, so the model reads them there), and structured under
 * `_meta["ptc-executor/contexts"]` for a harness that places them itself.
 */
function withContexts(result: CallToolResult, contexts: readonly RunContext[] | undefined): CallToolResult {
  if (contexts === undefined || contexts.length === 0) return result;
  const blocks = contexts.flatMap((context) => {
    const from = context.via === 'inject' ? `injected by ${context.source ?? 'a tool'}` : context.source === undefined ? 'from a hook' : `from ${context.source}`;
    return context.content.flatMap((block) => (block.type === 'text' ? [{ type: 'text' as const, text: `[context ${from}]\n${block.text}` }] : []));
  });
  return { ...result, content: [...result.content, ...blocks], _meta: { ...result._meta, [CONTEXTS_META_KEY]: contexts as unknown as JsonValue } };
}

function failure(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

function textOf(content: readonly { type: string }[]): CallToolResult['content'] {
  return content.filter((block): block is { type: 'text'; text: string } => block.type === 'text');
}

function decodeName(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}
