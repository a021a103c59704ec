import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // isolated-vm needs this flag on Node >= 20; every worker gets it.
    execArgv: ['--no-node-snapshot'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
