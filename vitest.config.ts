import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { ISOLATE_HOST_FLAGS } from './sandbox/host-flags.ts';
import LongestFirst from './test/sequencer.ts';

// The suite starts many Node processes (sandbox children, the CLI, MCP servers, probes) that
// each compile the same TypeScript and dependencies; with Node's compile cache, set before the
// workers start so that every process below them inherits it, only the first of them compiles.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'ptc-executor-test-compile-cache');

const BROWSER_FILES = 'test/playground/**/*.test.ts';
const NODE_WORKERS = availableParallelism() + 1;

const shared = {
  // Every worker makes isolates: it gets the flags such a process needs (sandbox/host-flags.ts).
  execArgv: [...ISOLATE_HOST_FLAGS],
  pool: 'forks' as const,
  // Each worker process runs its files one after another, not each in a fresh process: that cost
  // ~0.5 s of start-up and import per file, a third of the suite on this machine. Tests are
  // hermetic (temp dirs, port 0, their own runtimes), so they do not lean on a fresh module graph;
  // anything that can take a process down runs in a child process of its own (the *.probe.ts files).
  isolate: false,
  testTimeout: 30_000,
  hookTimeout: 30_000,
};

export default defineConfig({
  test: {
    ...shared,
    globalSetup: ['test/temp-root.ts', 'test/warm-compile-cache.ts'],
    // Without durations from an earlier run (a fresh clone), the longest files start first.
    sequence: { sequencer: LongestFirst },
    // CI also writes a machine-readable summary; .ci/run prints its closing line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-results.json' }]] : ['default'],
    // One conformance suite, every runtime: test/code-mode and test/sandbox run a
    // second time with their programs in the `process` runtime (test/helpers/runtimes.ts).
    // The process runtime's own tests (test/sandbox/process-*) make their runtimes themselves.
    //
    // Most files wait on child processes, servers and PostgreSQL rather than compute, so the Node
    // files run on one worker more than there are cores. The browser files (test/playground) run
    // after them, alone: beside another file, Chromium's TypeScript worker could not answer within
    // the page's waits.
    projects: [
      { test: { ...shared, name: 'default', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, BROWSER_FILES], maxWorkers: NODE_WORKERS } },
      { test: { ...shared, name: 'browser', include: [BROWSER_FILES], maxWorkers: 1, sequence: { groupOrder: 1 } } },
      {
        test: {
          ...shared,
          name: 'process-runtime',
          maxWorkers: NODE_WORKERS,
          include: ['test/code-mode/**/*.test.ts', 'test/sandbox/**/*.test.ts'],
          exclude: [
            // The in-process runtime's burst threads are its own; they run the process runtime's protocol already.
            'test/sandbox/process-*.test.ts',
            'test/sandbox/burst-threads.test.ts',
            'test/sandbox/thread-children.test.ts',
            'test/sandbox/session-isolates.test.ts',
            'test/sandbox/exit-collection.test.ts',
            'test/sandbox/guest-tiering.test.ts',
            // These pick their runtimes themselves (both, where it matters) or test a part that runs no
            // program; the second pass would run them again unchanged.
            'test/code-mode/create-code-mode.test.ts',
            // The type check runs on the host before any sandbox: the second pass would repeat the checker's work.
            'test/code-mode/typecheck.test.ts',
            'test/sandbox/memory-budget.test.ts',
            'test/sandbox/child-exit.test.ts',
            'test/sandbox/sync-crossing.test.ts',
            'test/sandbox/dispose-during-call.test.ts',
            'test/sandbox/leave-process.test.ts',
            'test/sandbox/slow-tools.test.ts',
            'test/sandbox/guest-source.test.ts',
            'test/sandbox/strip-types.test.ts',
            'test/sandbox/wait-queue.test.ts',
          ],
          env: { PTC_TEST_RUNTIME: 'process' },
        },
      },
    ],
  },
});
