/**
 * Figures the capacity benches share: the resident memory of a process and
 * all its descendants, sampled until stopped (Linux /proc; elsewhere the
 * figures are absent), and the per-run summary line.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { quantile } from './section.ts';

const PAGE = 4096;
const MiB = 1024 * 1024;

/** RSS bytes of `root` and every process descending from it; undefined without /proc. */
export function treeRss(root: number): number | undefined {
  return treeSum(root, (fields) => Number(fields[21]) * PAGE);
}

/** CPU ms (user + system, all threads) of `root` and its live descendants; undefined without /proc. */
export function treeCpuMs(root: number): number | undefined {
  const tick = 10; // ms per clock tick (USER_HZ is 100 on Linux)
  return treeSum(root, (fields) => (Number(fields[11]) + Number(fields[12])) * tick);
}

function treeSum(root: number, figure: (fields: string[]) => number): number | undefined {
  const parents = new Map<number, number>();
  const rss = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      parents.set(Number(entry), Number(fields[1]));
      rss.set(Number(entry), figure(fields));
    } catch {
      // ended meanwhile
    }
  }
  if (!rss.has(root)) return undefined;
  let total = 0;
  for (const [pid, bytes] of rss) {
    for (let at: number | undefined = pid; at !== undefined && at > 1; at = parents.get(at)) {
      if (at === root) {
        total += bytes;
        break;
      }
    }
  }
  return total;
}

/** Samples `treeRss(root)` every `everyMs` until `stop()`, which returns the first and the peak sample. */
export function watchPeakRss(root: number, everyMs = 50): { stop(): { startBytes: number; peakBytes: number } | undefined } {
  const start = treeRss(root);
  let peak = start ?? 0;
  const timer = setInterval(() => {
    const now = treeRss(root);
    if (now !== undefined && now > peak) peak = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const last = treeRss(root);
      if (last !== undefined && last > peak) peak = last;
      return start === undefined ? undefined : { startBytes: start, peakBytes: peak };
    },
  };
}

export interface CapacityFigures {
  label: string;
  runs: number;
  sleepMs: number;
  ok: number;
  busy: number;
  failed: number;
  wallMs: number;
  /** Each run's wall time, ms. */
  runWallMs: number[];
  rss?: { startBytes: number; peakBytes: number };
  /** CPU ms the server (or this process) and its children spent during the burst. */
  cpuMs?: number;
  /** What else ran on the machine: the 1-minute load average at the end. */
  load: number;
}

export function printCapacity(f: CapacityFigures): void {
  const over = f.runWallMs.map((ms) => ms - f.sleepMs).sort((a, b) => a - b);
  const mib = (bytes: number) => (bytes / MiB).toFixed(0);
  const rss =
    f.rss === undefined
      ? 'peak RSS n/a (no /proc)'
      : `peak RSS ${mib(f.rss.peakBytes)} MiB (from ${mib(f.rss.startBytes)}), ${((f.rss.peakBytes - f.rss.startBytes) / f.runs / 1024).toFixed(0)} KiB per waiting run`;
  console.log(
    `${f.label}: ${f.runs} runs awaiting a ${f.sleepMs} ms tool: ok ${f.ok}, busy ${f.busy}, failed ${f.failed}; ` +
      `wall ${(f.wallMs / 1000).toFixed(2)} s (${(f.wallMs / f.sleepMs).toFixed(2)}× the sleep); ` +
      `run wall − sleep p50 ${quantile(over, 0.5)?.toFixed(0) ?? 'n/a'} ms, p99 ${quantile(over, 0.99)?.toFixed(0) ?? 'n/a'} ms; ${rss}; ${f.cpuMs === undefined ? '' : `CPU ${(f.cpuMs / f.runs).toFixed(2)} ms per run; `}load ${f.load.toFixed(1)}`,
  );
}
