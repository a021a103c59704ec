import { defineConfig } from 'vitest/config';

const shared = {
  // isolated-vm needs this flag on Node >= 20; every worker gets it.
  execArgv: ['--no-node-snapshot'],
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
    // CI also writes a machine-readable summary; .ci/run prints its closing line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-results.json' }]] : ['default'],
    // One conformance suite, every runtime: test/code-mode and test/sandbox run a
    // second time with their programs in the `process` runtime (test/helpers/runtimes.ts).
    // The process runtime's own tests (test/sandbox/process-*) make their runtimes themselves.
    projects: [
      { test: { ...shared, name: 'default', include: ['test/**/*.test.ts'] } },
      {
        test: {
          ...shared,
          name: 'process-runtime',
          include: ['test/code-mode/**/*.test.ts', 'test/sandbox/**/*.test.ts'],
          // The in-process runtime's burst threads are its own; they run the process runtime's protocol already.
          exclude: ['test/sandbox/process-*.test.ts', 'test/sandbox/burst-threads.test.ts', 'test/sandbox/thread-children.test.ts', 'test/sandbox/session-isolates.test.ts', 'test/sandbox/exit-collection.test.ts', 'test/sandbox/guest-tiering.test.ts'],
          env: { PTC_TEST_RUNTIME: 'process' },
        },
      },
    ],
  },
});
