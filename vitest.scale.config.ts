import { defineConfig } from 'vitest/config';

/**
 * Scale tests start worker and API processes of their own and drive tens of thousands of records and hundreds of
 * erasures through them: one file at a time, one test at a time, in a single fork, never beside another heavy run.
 * Sizes come from `LETHE_SCALE_*` (test/scale/scale-data.ts), so a smoke run can be made first.
 */
export default defineConfig({
  test: {
    include: ['test/scale/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
    sequence: { concurrent: false, shuffle: false },
    // A phase: thousands of records admitted, then erasures that each compact the shared stores: on 2 cores, the
    // full sizes take tens of minutes.
    testTimeout: 150 * 60_000,
    hookTimeout: 10 * 60_000,
    reporters: ['default'],
  },
});
