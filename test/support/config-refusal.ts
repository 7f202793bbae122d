/** The least environment that parses, and the refusal an environment meets: for tests of configuration. */
import { ConfigError, parseConfig } from '../../src/config/config.js';

export const minimalEnv = {
  LETHE_TOKEN_SECRET: 'x'.repeat(32),
  LETHE_FINGERPRINT_SECRET: 'y'.repeat(32),
  LETHE_SIGNING_KEY_FILE: '/keys/signing.pem',
  LETHE_EMBEDDING_MODEL_DIR: '/models/minilm',
};

/** The ConfigError `parseConfig` throws on `minimalEnv` with `env` over it; fails the test when it parses. */
export function configRefusal(env: Record<string, string>): ConfigError {
  try {
    parseConfig({ ...minimalEnv, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
