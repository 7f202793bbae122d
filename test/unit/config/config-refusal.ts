import { ConfigError } from '../../../src/config/config.js';

/** The ConfigError that `build` throws; any other outcome fails the test. */
export function configRefusal(build: () => unknown): ConfigError {
  try {
    build();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
