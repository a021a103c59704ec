// The service's own tracing: OTEL_* variables turn on an OTLP/HTTP exporter, here pointed at a
// receiver made in the test.
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/config.ts';
import { startServiceTracing, tracesEndpoint } from '../../services/otel-sdk.ts';
import { createServer } from '../../services/server.ts';
import { post, tempDir } from './helpers.ts';

interface OtlpBody {
  resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: { name: string }[] }[] }[];
}

describe('service tracing from OTEL_* variables', () => {
  it('exports the spans of a run over OTLP/HTTP to the endpoint named, flushed on close', async () => {
    const posts: { url: string; contentType: string | undefined; body: OtlpBody }[] = [];
    const receiver = createHttpServer((request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString()));
      request.on('end', () => {
        posts.push({ url: request.url!, contentType: request.headers['content-type'], body: JSON.parse(text) as OtlpBody });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'ptc-under-test',
      };
      const cwd = await tempDir();
      const base = loadConfig({ cwd, env: {} });
      const server = await createServer({ ...base, runtime: 'in-process', logLevel: 'silent', port: 0, pool: { ...base.pool, burstThreads: 0 } }, { env });
      const url = await server.listen();
      const response = await post(`${url}/v1/run`, { code: 'return (await tools.glob({ pattern: "*" })).files.length' });
      expect(response.status).toBe(200);
      await server.close();

      expect(posts.length).toBeGreaterThan(0);
      expect(posts.every((p) => p.url === '/v1/traces' && p.contentType === 'application/json')).toBe(true);
      const resources = posts.flatMap((p) => p.body.resourceSpans);
      const names = resources.flatMap((r) => r.scopeSpans.flatMap((scope) => scope.spans.map((span) => span.name)));
      expect(names).toEqual(expect.arrayContaining(['execute_tool run_code', 'execute_tool glob', 'ptc.execute']));
      expect(resources[0].resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'ptc-under-test' } });
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('is on only when an exporter is named, and off when disabled', () => {
    expect(tracesEndpoint({})).toBeUndefined();
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe('http://c:4318/v1/traces');
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toBe('http://c:4318/v1/traces');
    expect(tracesEndpoint({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe('http://localhost:4318/v1/traces');
    expect(tracesEndpoint({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBeUndefined();
    expect(tracesEndpoint({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBeUndefined();
    expect(() => tracesEndpoint({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/use otlp/);
    expect(() => tracesEndpoint({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/http\/json/);
  });

  it('names the npm install command when the OpenTelemetry packages are missing', async () => {
    const missing = (name: string) => Promise.reject(Object.assign(new Error(`Cannot find package '${name}'`), { code: 'ERR_MODULE_NOT_FOUND' }));
    await expect(startServiceTracing({ OTEL_TRACES_EXPORTER: 'otlp' }, missing)).rejects.toThrow(/npm install @opentelemetry\/api@\^1\.10\.0 @opentelemetry\/sdk-trace@\^3\.0\.0 /);
    expect(await startServiceTracing({}, missing)).toBeUndefined();
  });
});
