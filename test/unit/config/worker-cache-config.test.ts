import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.js';
import { envRefusal, minimalEnv } from '../../support/config-refusal.js';

const base = { ...minimalEnv, LETHE_ENV: 'test' };

describe('the worker’s cache of waiting workflows', () => {
  it('keeps 500 by default, and what is set', () => {
    expect(parseConfig(base).temporal.maxCachedWorkflows).toBe(500);
    expect(parseConfig({ ...base, LETHE_WORKER_MAX_CACHED_WORKFLOWS: '40' }).temporal.maxCachedWorkflows).toBe(40);
  });

  it('refuses a bound the SDK cannot run with, or that is not a count, at boot, naming the variable', () => {
    // The SDK needs 0 (no cache, every task replays) or at least 2; 0 is refused too: it would replay every review
    // from its history at each of its tasks.
    for (const value of ['0', '1', '-5', '2.5', 'many', '100001', '5\u0000'])
      expect(envRefusal({ LETHE_WORKER_MAX_CACHED_WORKFLOWS: value }).variable).toBe(
        'LETHE_WORKER_MAX_CACHED_WORKFLOWS',
      );
  });
});
