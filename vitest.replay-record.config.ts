import { defineConfig } from 'vitest/config';

/**
 * Records the workflow histories `test/replay/` replays (`npm run replay:record`): real runs of every workflow
 * type on the local stack, written to `test/replay/histories/`. Run it when a workflow type is added; never to
 * make a replay that fails pass (that failure is a deploy that would break workflows in flight).
 */
export default defineConfig({
  test: {
    include: ['test/replay/record-histories.record.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    poolOptions: { forks: { singleFork: true } },
    testTimeout: 15 * 60_000,
    hookTimeout: 5 * 60_000,
    reporters: ['default'],
  },
});
