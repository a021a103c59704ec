import { defineConfig } from 'vitest/config';

const shared = {
  // isolated-vm needs this flag on Node >= 20; every worker gets it.
  execArgv: ['--no-node-snapshot'],
  pool: 'forks' as const,
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
          exclude: ['test/sandbox/process-*.test.ts'],
          env: { PTC_TEST_RUNTIME: 'process' },
        },
      },
    ],
  },
});
