/**
 * Figures the capacity benches share: the resident memory of a process and
 * all its descendants, sampled until stopped (Linux /proc; elsewhere the
 * figures are absent), and the per-run summary line.
 */
import { readFileSync } from 'node:fs';
import { quantile } from './section.ts';

const PAGE = 4096;
const MiB = 1024 * 1024;

/** RSS bytes of `root` and every process descending from it; undefined without /proc. */
export function treeRss(root: number): number | undefined {
  return treeSum(root, (fields) => Number(fields[21]) * PAGE);
}

/** CPU ms (user + system, all threads) of `root` and its live descendants; undefined without /proc. */
export function treeCpuMs(root: number): number | undefined {
  return treeSum(root, cpuMsOf);
}

/** CPU ms (user + system) of `pid` alone; undefined without /proc. */
export function ownCpuMs(pid: number): number | undefined {
  try {
    return cpuMsOf(statFields(pid));
  } catch {
    return undefined;
  }
}

/** CPU ms of /proc/<pid>/stat's fields (after the command name): utime + stime, in clock ticks of 10 ms (USER_HZ is 100 on Linux). */
function cpuMsOf(fields: string[]): number {
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function statFields(pid: number): string[] {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
}

/**
 * Calls `visit` for `root` and each live descendant, found through
 * /proc/<pid>/task/<pid>/children: a few reads, not a scan of every process,
 * nor of every thread (a Node process has a dozen, isolated-vm adds more; at
 * one read each, sampling every 100 ms cost the bench's own process about
 * 0.5 ms of CPU per run of a 1,000-run burst). Node forks from its main
 * thread, so its children are listed there. The probe must not steal the
 * CPU it measures. A process that ended meanwhile (or no /proc) is skipped.
 */
function eachProcess(root: number, visit: (pid: number, fields: string[]) => void): void {
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    try {
      visit(pid, statFields(pid));
      for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ')) {
        if (child.trim() !== '') stack.push(Number(child));
      }
    } catch {
      // ended meanwhile, or no /proc
    }
  }
}

/** Sums `figure` over `root` and its live descendants; undefined when `root` cannot be read. */
function treeSum(root: number, figure: (fields: string[]) => number): number | undefined {
  let total = 0;
  let seen = false;
  eachProcess(root, (pid, fields) => {
    total += figure(fields);
    seen ||= pid === root;
  });
  return seen ? total : undefined;
}

/**
 * CPU ms (user + system) of `root` and of each live descendant, by pid, with
 * the file each runs (its command line's last word, without the folder).
 */
export function processCpuMs(root: number): Map<number, { name: string; ms: number }> {
  const found = new Map<number, { name: string; ms: number }>();
  eachProcess(root, (pid, fields) => {
    const words = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((word) => word !== '');
    found.set(pid, { name: (words.at(-1) ?? '?').split('/').at(-1) ?? '?', ms: cpuMsOf(fields) });
  });
  return found;
}

/** One line: each process's CPU per run between two `processCpuMs` readings (`root` named `rootName`), and this process's. */
export function describeCpuSplit(
  root: number,
  rootName: string,
  before: Map<number, { name: string; ms: number }>,
  after: Map<number, { name: string; ms: number }>,
  ownMs: number,
  runs: number,
): string {
  const parts: string[] = [];
  for (const [pid, { name, ms }] of after) {
    const perRun = (ms - (before.get(pid)?.ms ?? 0)) / runs;
    parts.push(`${pid === root ? rootName : name} ${perRun.toFixed(2)}`);
  }
  return `CPU per run by process, ms: ${parts.join(', ')}; this load generator ${(ownMs / runs).toFixed(2)}`;
}

/** Samples `treeRss(root)` every `everyMs` until `stop()`, which returns the first and the peak sample. */
export function watchPeakRss(root: number, everyMs = 100): { stop(): { startBytes: number; peakBytes: number } | undefined } {
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
  /** Of `cpuMs`, what the server (or this process) spent itself. */
  ownCpuMs?: number;
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
      `run wall − sleep p50 ${quantile(over, 0.5)?.toFixed(0) ?? 'n/a'} ms, p99 ${quantile(over, 0.99)?.toFixed(0) ?? 'n/a'} ms; ${rss}; ${f.cpuMs === undefined ? '' : `CPU ${(f.cpuMs / f.runs).toFixed(2)} ms per run${f.ownCpuMs === undefined ? '' : ` (${(f.ownCpuMs / f.runs).toFixed(2)} in the main process)`}; `}load ${f.load.toFixed(1)}`,
  );
}
