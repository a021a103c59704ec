/**
 * Prometheus metrics (prom-client), on a registry of their own so several
 * servers (or a host's own metrics) never collide.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ToolExecutionResult } from '../src/tool.ts';
import type { SandboxPoolStatus } from '../src/sandbox-runtime.ts';

/** `code` for POST /v1/run, `tool` for POST /v1/tools/:name. */
export type RunKind = 'code' | 'tool';

export interface PtcMetrics {
  readonly registry: Registry;
  runStarted(): void;
  /** Records a finished outer call: counts it by kind and outcome, and its duration. */
  runFinished(kind: RunKind, result: ToolExecutionResult, seconds: number): void;
  nestedCall(tool: string, outcome: string): void;
  /** Counts a connection answered 503 and closed at a connection cap. */
  connectionRefused(cap: 'per-client'): void;
  /** The text exposition format, and its content type. */
  render(): Promise<{ contentType: string; body: string }>;
}

export interface MetricsOptions {
  /** Pool status for the `ptc_pool_*` gauges (the sandbox runtime's `status`). */
  poolStatus?: () => SandboxPoolStatus;
  /** Also export Node's process metrics (heap, RSS, event loop lag). Default true. */
  processMetrics?: boolean;
}

/** `ok`, a failed run's kind (`timeout`, `syntax`, …) or an error code in lower case. */
export function outcomeOf(result: ToolExecutionResult): string {
  if (!result.isError) return 'ok';
  const info = result.error.info;
  if (info?.kind !== undefined) return info.kind;
  return (info?.code ?? 'error').toLowerCase();
}

export function createMetrics(options: MetricsOptions = {}): PtcMetrics {
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  const runs = new Counter({
    name: 'ptc_runs_total',
    help: 'Outer calls served: kind code (POST /v1/run) or tool (POST /v1/tools/:name), by outcome (ok, failure kind or error code).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'ptc_run_duration_seconds',
    help: 'Wall time of outer calls, seconds.',
    labelNames: ['kind'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600],
    registers: [registry],
  });
  const inFlight = new Gauge({ name: 'ptc_runs_in_flight', help: 'Outer calls running now.', registers: [registry] });
  const nested = new Counter({
    name: 'ptc_nested_calls_total',
    help: 'Tool calls made by programs, by tool and outcome (ok or error code).',
    labelNames: ['tool', 'outcome'] as const,
    registers: [registry],
  });
  const refusedConnections = new Counter({
    name: 'ptc_connections_refused_total',
    help: 'Requests answered 503 TOO_MANY_CONNECTIONS on a connection past a cap (cap: per-client).',
    labelNames: ['cap'] as const,
    registers: [registry],
  });
  const pool = options.poolStatus;
  if (pool !== undefined) {
    type Figure = { [K in keyof SandboxPoolStatus]-?: NonNullable<SandboxPoolStatus[K]> extends number | boolean ? K : never }[keyof SandboxPoolStatus];
    const figure = (field: Figure): number => {
      const value = pool()[field];
      return typeof value === 'boolean' ? Number(value) : (value ?? 0);
    };
    const gauge = (name: string, help: string, field: Figure) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(figure(field));
        },
      });
    // Running totals the runtime keeps: exported as counters, set from its figure at each scrape.
    const total = (name: string, help: string, field: Figure) =>
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(figure(field));
        },
      });
    gauge('ptc_pool_children', 'Sandbox children ready: child processes, or the in-process runtime\'s burst threads.', 'children');
    gauge('ptc_pool_busy', 'Runs admitted to the sandbox and not yet ended.', 'busy');
    gauge('ptc_pool_queued', 'Runs waiting for sandbox memory headroom.', 'queued');
    gauge('ptc_pool_restarts', 'Sandbox children replaced since start (crash, hang or memory ceiling).', 'restarts');
    total('ptc_pool_admitted_total', 'Runs admitted to the sandbox since start.', 'admitted');
    total('ptc_pool_refused_total', 'Runs refused busy since start (queue full, or no compute slot or memory headroom freed while the queue stalled).', 'refused');
    total('ptc_pool_memory_stopped_total', 'Runs failed memory by the sandbox budget since start (the runs outgrew it; each had grown most).', 'memoryStopped');
    gauge('ptc_pool_memory_budget_bytes', 'Memory the sandbox runs may hold together, bytes.', 'memoryBudgetBytes');
    gauge('ptc_pool_memory_used_bytes', 'Sandbox memory budget in use: per run its reservation or measured isolate size, whichever is larger.', 'memoryUsedBytes');
    total('ptc_pool_isolates_reused_total', 'Runs that took an isolate an earlier run of their session had used, in a fresh context, since start.', 'isolatesReused');
    gauge('ptc_pool_kept_isolate_bytes', "Heap pages in RAM of the isolates kept for sessions' next runs, bytes (at most a quarter of the memory budget, beside it).", 'keptIsolateBytes');
    gauge('ptc_pool_saturated', '1 while a new run would wait for a compute slot or memory headroom (also /readyz 503), else 0.', 'saturated');
    new Gauge({
      name: 'ptc_pool_saturated_by',
      help: 'While saturated, 1 for what a new run would wait for (cause: compute slot or memory headroom), else 0.',
      labelNames: ['cause'] as const,
      registers: [registry],
      collect() {
        const by = pool().saturatedBy;
        for (const cause of ['compute', 'memory'] as const) this.set({ cause }, Number(by === cause));
      },
    });
  }
  return {
    registry,
    runStarted: () => inFlight.inc(),
    runFinished(kind, result, seconds) {
      inFlight.dec();
      runs.inc({ kind, outcome: outcomeOf(result) });
      duration.observe({ kind }, seconds);
    },
    nestedCall: (tool, outcome) => nested.inc({ tool, outcome }),
    connectionRefused: (cap) => refusedConnections.inc({ cap }),
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
