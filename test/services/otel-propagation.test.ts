// Trace context in and out: the incoming traceparent (HTTP header, MCP `_meta`) parents the run,
// and the upstream requests of tool sources (OpenAPI, MCP) carry the context on.
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { connectMcpServers } from '../../src/mcp/index.ts';
import { openApiTools } from '../../src/openapi/index.ts';
import { instrument } from '../../services/otel-instrument.ts';
import { createBench, valueOf } from '../code-mode/harness.ts';
import { statelessMcpHandler } from '../mcp/helpers.ts';
import { post, startServer } from './helpers.ts';

const PARENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${PARENT_TRACE}-${PARENT_SPAN}-01`;

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tracing(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  cleanups.push(instrument({ tracerProvider: provider }));
  return exporter;
}

function listen(handler: Parameters<typeof createHttpServer>[1]): Promise<{ url: string; server: HttpServer }> {
  const server = createHttpServer(handler);
  cleanups.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

const spanNamed = (spans: ReadableSpan[], name: string) => spans.find((span) => span.name === name)!;
const traceparentOf = (span: ReadableSpan) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;

describe('trace context in', () => {
  it('parents a POST /v1/run to its traceparent header, without any Fastify instrumentation', async () => {
    const exporter = tracing();
    const running = await startServer();
    cleanups.push(() => running.server.close());
    const response = await post(`${running.url}/v1/run`, { code: 'return 1', callId: 'c1' }, { traceparent: TRACEPARENT, tracestate: 'vendor=x' });
    expect(response.status).toBe(200);
    const run = spanNamed(exporter.getFinishedSpans(), 'execute_tool run_code');
    expect(run.spanContext().traceId).toBe(PARENT_TRACE);
    expect(run.parentSpanContext?.spanId).toBe(PARENT_SPAN);
    expect(run.spanContext().traceState?.get('vendor')).toBe('x');
  });

  it('parents a run_code over /mcp to the traceparent in its _meta', async () => {
    const exporter = tracing();
    const running = await startServer();
    cleanups.push(() => running.server.close());
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', running.url)));
    cleanups.push(() => client.close());
    const result = await client.callTool({ name: 'run_code', arguments: { code: 'return 2', description: 'test' }, _meta: { traceparent: TRACEPARENT } });
    expect(result.isError).not.toBe(true);
    const run = spanNamed(exporter.getFinishedSpans(), 'execute_tool run_code');
    expect(run.spanContext().traceId).toBe(PARENT_TRACE);
    expect(run.parentSpanContext?.spanId).toBe(PARENT_SPAN);
  });
});

describe('trace context out', () => {
  it('sends the OpenAPI request span as traceparent, and no header while no tracer listens', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const api = await listen((request, response) => {
      seen.push(request.headers);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const spec = {
      openapi: '3.0.3',
      info: { title: 'Ping', version: '1' },
      paths: { '/ping': { get: { operationId: 'ping', responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } } } } },
    };
    const bench = createBench();
    cleanups.push(() => bench.close());
    for (const definition of await openApiTools({ name: 'api', spec, baseUrl: api.url })) bench.registry.register(definition);

    const exporter = tracing();
    expect(valueOf(await bench.runCode('return await tools.api__ping({})')).result).toEqual({ ok: true });
    const spans = exporter.getFinishedSpans();
    const request = spanNamed(spans, 'GET /ping');
    expect(seen[0].traceparent).toBe(traceparentOf(request));
    expect(request.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.template': '/ping',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(api.url).port),
      'http.response.status_code': 200,
      'gen_ai.tool.call.id': 'run-1:ptc:1',
    });
    // The request sits under the call's execute phase, in the run's trace.
    const execute = spans.find((span) => span.name === 'ptc.execute')!;
    expect(request.parentSpanContext?.spanId).toBe(execute.spanContext().spanId);
    expect(request.spanContext().traceId).toBe(spanNamed(spans, 'execute_tool run_code').spanContext().traceId);

    cleanups.pop()!();
    expect(valueOf(await bench.runCode('return await tools.api__ping({})')).result).toEqual({ ok: true });
    expect(seen[1].traceparent).toBeUndefined();
  });

  it('puts the MCP call span in the upstream tools/call _meta', async () => {
    const metas: unknown[] = [];
    const upstream = await listen(
      statelessMcpHandler(() => {
        const server = new McpServer({ name: 'up', version: '1.0.0' });
        server.registerTool('echo', { description: 'Echoes.', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text }, extra) => {
          metas.push(extra._meta);
          return { content: [{ type: 'text', text }] };
        });
        return server;
      }),
    );
    const bench = createBench();
    cleanups.push(() => bench.close());
    const bridge = await connectMcpServers({ servers: { up: { url: `${upstream.url}/mcp` } }, registry: bench.registry });
    cleanups.push(() => bridge.close());

    const exporter = tracing();
    const result = await bench.runCode('return (await tools.up__echo({ text: "hi" })).content[0].text');
    expect(valueOf(result).result).toBe('hi');
    const call = spanNamed(exporter.getFinishedSpans(), 'tools/call echo');
    expect(call.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo', 'rpc.system': 'mcp', 'rpc.service': 'up', 'rpc.method': 'tools/call' });
    expect(metas).toEqual([{ traceparent: traceparentOf(call) }]);
  });
});
