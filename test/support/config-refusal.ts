/** The least environment that parses, and the refusal a configuration meets: for tests of configuration. */
import { ConfigError, parseConfig } from '../../src/config/config.js';

export const minimalEnv = {
  LETHE_ENV: 'development',
  LETHE_TOKEN_SECRET: 'x'.repeat(32),
  LETHE_FINGERPRINT_SECRET: 'y'.repeat(32),
  LETHE_SIGNING_KEY_FILE: '/keys/signing.pem',
  LETHE_EMBEDDING_MODEL_DIR: '/models/minilm',
  LETHE_KEK_FILE: '/keys/kek.json',
};

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

/** The ConfigError `parseConfig` throws on `minimalEnv` with `env` over it. */
export function envRefusal(env: Record<string, string>): ConfigError {
  return configRefusal(() => parseConfig({ ...minimalEnv, ...env }));
}
