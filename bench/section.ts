/** What a benchmark section is, and small helpers the sections share. */

/** One named section of `npm run bench`. `run` prints its figures; it never asserts times. */
export interface BenchSection {
  /** Short kebab-case name, used by `--only <name>`. */
  name: string;
  /** One line shown before the section runs. */
  description: string;
  /** Node flags the section's process needs beyond `npm run bench`'s own (it runs in a process of its own). */
  nodeFlags?: readonly string[];
  run(): Promise<void>;
}

/** The value after `--name` in `argv`, else `fallback`. */
export function flag(argv: readonly string[], name: string, fallback: string): string {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 && argv[at + 1] !== undefined ? argv[at + 1] : fallback;
}

/** The median of `samples` (which it sorts in place). */
export function median(samples: number[]): number {
  samples.sort((a, b) => a - b);
  const mid = samples.length >> 1;
  return samples.length % 2 === 1 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
}

/** The `q`-quantile (0..1) of sorted `samples`. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))];
}

/** Per-call figures of each batch, in µs: wall clock, and CPU time of this process (all its threads). */
export interface BatchTimes {
  wall: number[];
  cpu: number[];
}

/**
 * Times `batches` batches of `perBatch` sequential awaited calls. CPU time
 * is the steadier figure on a shared machine: it does not count time the
 * process spent waiting for a core.
 */
export async function timeBatches(
  call: () => Promise<unknown>,
  batches: number,
  perBatch: number,
  between?: () => void,
): Promise<BatchTimes> {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let b = 0; b < batches; b++) {
    const cpuStart = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (let i = 0; i < perBatch; i++) await call();
    const elapsed = Number(process.hrtime.bigint() - start);
    const used = process.cpuUsage(cpuStart);
    wall.push(elapsed / perBatch / 1000);
    cpu.push((used.user + used.system) / perBatch);
    between?.();
  }
  return { wall, cpu };
}

export function fmt(us: number): string {
  return us < 10 ? us.toFixed(2) : us < 100 ? us.toFixed(1) : us.toFixed(0);
}
