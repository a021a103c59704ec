/**
 * The order of the suite's files when vitest has no durations of its own (a fresh clone, as CI
 * runs): the files that took longest first, then vitest's own order (larger files first, which
 * says little about time here). The suite is CPU-bound and each worker runs its files one after
 * another, so a long file started late decides alone when the run ends. Once its cache holds
 * durations from an earlier run, vitest orders by those and this list is not used.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that took 5 s or more in a run of the whole suite on this machine, longest first
 * (2026-12-06). A file missing here runs in vitest's order; a name here that no longer exists
 * fails test/sequencer.test.ts.
 */
export const LONGEST_FILES: readonly string[] = [
  'test/services/cli.test.ts',
  'test/security/slow-clients.test.ts',
  'test/sandbox/burst-threads.test.ts',
  'test/security/exhaustion/exhaustion.test.ts',
  'test/mcp-server/stdio.test.ts',
  'test/security/faults.test.ts',
  'test/sandbox/memory-budget.test.ts',
  'test/sandbox/process-deadline-kill.test.ts',
  'test/package/packed.test.ts',
  'test/typecheck.test.ts',
  'test/postgres/replicas.test.ts',
  'test/security/session-logs.test.ts',
  'test/mcp-server/approvals.test.ts',
  'test/sandbox/process-crash.test.ts',
  'test/typings/typecheck-pool.test.ts',
  'test/security/signals.test.ts',
  'test/services/tool-modules.test.ts',
  'test/sandbox/process-heap-bomb.test.ts',
  'test/security/mcp-bounds.test.ts',
  'test/sandbox/guest-tiering.test.ts',
  'test/mcp/lifecycle.test.ts',
  'test/sandbox/process-backpressure.test.ts',
  'test/sandbox/process-shutdown.test.ts',
  'test/security/host-tools.test.ts',
  'test/tools/patterns.test.ts',
  'test/src/jsonl-sink-bounds.test.ts',
  'test/sandbox/child-exit.test.ts',
  'test/services/approvals-cli.test.ts',
  'test/postgres/durable-replicas.test.ts',
  'test/postgres/shutdown-stuck.test.ts',
  'test/entries/entries.test.ts',
  'test/services/capacity.test.ts',
  'test/sandbox/memory-limit.test.ts',
  'test/services/production.test.ts',
  'test/sandbox/thread-children.test.ts',
  'test/code-mode/typecheck.test.ts',
  'test/sandbox/session-isolates.test.ts',
  'test/security/edge.test.ts',
  'test/compose/runtime-support.test.ts',
  'test/sandbox/process-parent-stall.test.ts',
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const path = (spec: TestSpecification): string => relative(root, spec.moduleId);
    if (sorted.some((spec) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${path(spec)}`) !== undefined)) return sorted;
    // vitest keeps each group and project together, in order: this moves listed files forward within one.
    let group = 0;
    const keyed = sorted.map((spec, at) => {
      const before = sorted[at - 1];
      if (before !== undefined && (before.project.name !== spec.project.name || before.project.config.sequence.groupOrder !== spec.project.config.sequence.groupOrder)) group++;
      const rank = LONGEST_FILES.indexOf(path(spec));
      return { spec, group, rank: rank < 0 ? LONGEST_FILES.length : rank, at };
    });
    keyed.sort((a, b) => a.group - b.group || a.rank - b.rank || a.at - b.at);
    return keyed.map(({ spec }) => spec);
  }
}
