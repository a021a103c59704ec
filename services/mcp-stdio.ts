/**
 * `ptc mcp`: the executor a configuration describes, as an MCP server on
 * stdin/stdout, the way desktop clients launch servers. stdout carries the
 * protocol and nothing else: logs go to stderr as JSON lines (sandbox
 * children and upstream servers already write theirs there).
 */
import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { leaveProcess } from '../sandbox/leave-process.ts';
import type { McpLogger } from '../src/mcp/index.ts';
import { assertWorkspaceApart, type LogLevel, type PtcConfig } from './config.ts';
import { createCore } from './core.ts';
import { createMcpCatalog } from './mcp-catalog.ts';
import { createPtcMcpServer } from './mcp-server.ts';
import { startServiceTracing } from './otel-sdk.ts';
import { createRunTracker } from './run-tracker.ts';
import { runStorageHooks } from './storage-admission.ts';
import { scopeOf } from './tenancy.ts';

const LEVELS: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** pino-shaped JSON lines on stderr, at or above `level`. */
export function stderrLogger(level: LogLevel): McpLogger {
  const at = (name: 'debug' | 'info' | 'warn' | 'error') => (data: Record<string, unknown>, msg: string) => {
    if (LEVELS[name] < LEVELS[level]) return;
    let line: string;
    try {
      line = JSON.stringify({ level: LEVELS[name], time: Date.now(), ...data, msg });
    } catch {
      line = JSON.stringify({ level: LEVELS[name], time: Date.now(), msg });
    }
    process.stderr.write(`${line}\n`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Serves until stdin closes or a signal arrives; then finishes (or, past the grace period, cancels) runs and closes everything. */
export async function serveMcpStdio(config: PtcConfig): Promise<void> {
  assertWorkspaceApart(config);
  const logger = stderrLogger(config.logLevel);
  const tracing = await startServiceTracing(process.env);
  const core = await createCore(config, { durable: true, logger });
  const runs = createRunTracker({ maxPerClient: config.maxConcurrentRunsPerClient });
  const catalog = createMcpCatalog({
    registry: core.registry,
    typings: () => core.codeMode.typings(),
    schemas: () => core.codeMode.toolSchemas(),
    typingsBudget: config.typingsBudget,
    promptLimits: { ...config.limits },
  });
  // One client per process: its runs form one session of the durable log.
  const sessionId = `mcp-${randomUUID()}`;
  const { server, idle, dispose } = createPtcMcpServer({
    registry: core.registry,
    sessions: core.sessions,
    logs: core.logs,
    codeMode: core.codeMode,
    catalog,
    runs,
    sessionId,
    // One local client: it may decide any paused run, also one paused before this process started.
    durable: { codeMode: core.codeMode, approvers: core.approvers, mayPause: core.mayPause },
    // A full disk or a reached quota refuses a run rather than losing its events.
    ...runStorageHooks({ sessions: core.sessions, ...(core.retention === undefined ? {} : { retention: core.retention }) }, scopeOf(undefined)),
  });
  let closing: Promise<void> | undefined;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const close = (why: string) => {
    closing ??= (async () => {
      logger.info({ why, graceMs: config.shutdownGraceMs }, 'ptc mcp: shutting down');
      const grace = setTimeout(() => runs.cancelAll('the server is shutting down'), config.shutdownGraceMs);
      grace.unref();
      // Calls already received are answered (or, past the grace period, cancelled) before the transport closes.
      await idle();
      // The SDK writes an answer a few promise hops after its handler returns: let it, before the transport closes.
      await new Promise((resolve) => setImmediate(resolve));
      await runs.idle();
      clearTimeout(grace);
      dispose();
      catalog.close();
      await server.close().catch(() => undefined);
      await core.close();
      await tracing?.shutdown();
    })();
    void closing.finally(finished);
    return closing;
  };
  const transport = new StdioServerTransport();
  // The SDK closes the transport itself when a message is over its read limit (10 MiB): say so, not "stdin closed".
  let overLimit = false;
  transport.onerror = (error) => {
    if (!/ReadBuffer exceeded/.test(error.message)) return;
    overLimit = true;
    logger.error({}, 'ptc mcp: the client sent a message over the 10 MiB the MCP SDK reads at once; the session ends (send smaller programs and arguments)');
  };
  // 'end' comes on the next tick after the last data, before the SDK has dispatched the requests in it:
  // close a turn of the event loop later, once every received call is being answered.
  const onEnd = () => setImmediate(() => void close(overLimit ? 'a message over the read limit' : 'stdin closed'));
  transport.onclose = onEnd;
  process.stdin.on('end', onEnd);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      // Not process.exit: in-process isolates may still be unwinding (sandbox/leave-process.ts).
      void close(signal).then(() => {
        process.stdin.destroy();
        leaveProcess(0);
      });
    });
  }
  await server.connect(transport);
  logger.info({ sessionId, tools: core.registry.schemas().length }, 'ptc mcp: serving on stdio');
  // stdin keeps the process alive until the client goes away.
  await done;
}
