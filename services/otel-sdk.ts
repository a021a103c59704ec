/**
 * Traces from the service when the standard `OTEL_*` variables name an exporter: the OpenTelemetry
 * SDK (optional peers, loaded only then) with a batching OTLP/HTTP exporter, registered as the
 * global tracer provider where none is, and `instrument()` on its channels. Off by default; this
 * module loads none of them until it is on.
 */
import { ConfigError } from './config.ts';

/** The optional peers the service loads when tracing is on, at the ranges package.json names. */
export const OTEL_PACKAGES = [
  '@opentelemetry/api@^1.10.0',
  '@opentelemetry/sdk-trace@^3.0.0',
  '@opentelemetry/context-async-hooks@^3.0.0',
  '@opentelemetry/resources@^3.0.0',
  '@opentelemetry/exporter-trace-otlp-http@^0.301.0',
] as const;

export interface ServiceTracing {
  /** Unsubscribes, exports what is still batched, and shuts the provider down. */
  shutdown(): Promise<void>;
}

type Env = Readonly<Record<string, string | undefined>>;

const set = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' ? undefined : value.trim());

/**
 * Where traces go, or undefined when the environment asks for none: `OTEL_TRACES_EXPORTER=otlp`,
 * or an OTLP endpoint set (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`).
 * `OTEL_SDK_DISABLED=true` and `OTEL_TRACES_EXPORTER=none` turn it off.
 */
export function tracesEndpoint(env: Env): string | undefined {
  if (set(env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true') return undefined;
  const exporters = set(env.OTEL_TRACES_EXPORTER)?.toLowerCase().split(',').map((name) => name.trim());
  if (exporters?.includes('none')) return undefined;
  const unsupported = exporters?.filter((name) => name !== 'otlp') ?? [];
  if (unsupported.length > 0) {
    throw new ConfigError(`OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER} names an exporter the service does not have: use otlp (OTLP over HTTP), or none`);
  }
  const protocol = set(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? set(env.OTEL_EXPORTER_OTLP_PROTOCOL);
  if (protocol === 'grpc') throw new ConfigError('OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: the service exports OTLP over HTTP (http/json); unset it or use http/json');
  const traces = set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (traces !== undefined) return traces;
  const base = set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (base !== undefined) return `${base.replace(/\/+$/, '')}/v1/traces`;
  // `otlp` named without an endpoint: the OTLP default, a collector on this host.
  return exporters?.includes('otlp') === true ? 'http://localhost:4318/v1/traces' : undefined;
}

/** `k1=v1,k2=v2` (values URL-encoded), as OTEL_EXPORTER_OTLP_HEADERS writes them. */
function headersOf(env: Env): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const text of [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS]) {
    for (const pair of (text ?? '').split(',')) {
      const at = pair.indexOf('=');
      if (at > 0) headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    }
  }
  return headers;
}

type Load = (name: string) => Promise<unknown>;

/** Starts tracing when `env` asks for it; undefined when it does not. */
export async function startServiceTracing(env: Env, load: Load = (name) => import(name)): Promise<ServiceTracing | undefined> {
  const url = tracesEndpoint(env);
  if (url === undefined) return undefined;
  let modules;
  try {
    modules = (await Promise.all([
      // Loads @opentelemetry/api, so it fails the same way when that is missing.
      import('./otel-instrument.ts'),
      load('@opentelemetry/api'),
      load('@opentelemetry/sdk-trace'),
      load('@opentelemetry/context-async-hooks'),
      load('@opentelemetry/resources'),
      load('@opentelemetry/exporter-trace-otlp-http'),
    ])) as [
      typeof import('./otel-instrument.ts'),
      typeof import('@opentelemetry/api'),
      typeof import('@opentelemetry/sdk-trace'),
      typeof import('@opentelemetry/context-async-hooks'),
      typeof import('@opentelemetry/resources'),
      typeof import('@opentelemetry/exporter-trace-otlp-http'),
    ];
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new ConfigError(`tracing is on (OTEL_* names an exporter) but the OpenTelemetry packages are not installed: run npm install ${OTEL_PACKAGES.join(' ')}, or unset the OTEL_* variables`);
  }
  const [{ instrument }, api, sdk, hooks, resources, otlp] = modules;
  const provider = new sdk.TracerProvider({
    resource: resources.defaultResource().merge(resources.resourceFromAttributes({ 'service.name': set(env.OTEL_SERVICE_NAME) ?? 'ptc-executor' })),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter: new otlp.OTLPTraceExporter({ url, headers: headersOf(env) }) })],
  });
  // Global where nothing else registered first, so tools' own spans nest in the active context.
  const contextManager = new hooks.AsyncLocalStorageContextManager().enable();
  const ownsContext = api.context.setGlobalContextManager(contextManager);
  if (!ownsContext) contextManager.disable();
  const ownsProvider = api.trace.setGlobalTracerProvider(provider);
  const uninstall = instrument({ tracerProvider: provider });
  return {
    async shutdown() {
      uninstall();
      if (ownsProvider) api.trace.disable();
      if (ownsContext) api.context.disable();
      await provider.shutdown();
    },
  };
}
