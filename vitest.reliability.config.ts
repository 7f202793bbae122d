import { defineConfig } from 'vitest/config';

/**
 * Reliability tests pause and restart the local servers (stores, Temporal, SMTP): one file at a time, one test at
 * a time, in a single fork, never beside `npm test`. `LETHE_RELIABILITY=reduced` runs the CI subset.
 */
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.reliability.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
    sequence: { concurrent: false, shuffle: false },
    // A scenario: a fault of up to a minute, the long retry profile's budget (minutes), an operator's retry.
    testTimeout: 30 * 60_000,
    hookTimeout: 5 * 60_000,
    reporters: ['default'],
  },
});
