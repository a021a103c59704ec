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
    // One run_code conformance suite, every runtime: test/code-mode runs a
    // second time with its programs in the `process` runtime (test/helpers/runtimes.ts).
    projects: [
      { test: { ...shared, name: 'default', include: ['test/**/*.test.ts'] } },
      { test: { ...shared, name: 'code-mode:process', include: ['test/code-mode/**/*.test.ts'], env: { PTC_TEST_RUNTIME: 'process' } } },
    ],
  },
});
