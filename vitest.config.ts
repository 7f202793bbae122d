import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Reliability tests pause shared servers: they run alone (`npm run test:reliability`), never in parallel here.
    exclude: [...configDefaults.exclude, 'test/reliability/**', 'test/scale/**'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
