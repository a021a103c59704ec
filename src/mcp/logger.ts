/**
 * The logger the bridge writes to: a pino-compatible subset (Fastify's
 * `app.log` fits). Tool arguments and values are never logged.
 */
export type McpLogFn = (data: Record<string, unknown>, message: string) => void;

export interface McpLogger {
  debug: McpLogFn;
  info: McpLogFn;
  warn: McpLogFn;
  error: McpLogFn;
}

const ignore: McpLogFn = () => undefined;

export const silentLogger: McpLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
