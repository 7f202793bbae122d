/**
 * The environment the release check runs the API and the worker in: production, against the local stack, with keys
 * of its own made for the run. Built from nothing (not from this process's environment), so no NODE_PATH,
 * NODE_OPTIONS, tsx loader or LETHE_STATE_DIR of the checkout reaches the release.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { StackManifest } from '../../stack/stack-config.js';

export interface CheckKeys {
  /** The Ed25519 private key the check mints tokens with (never given to the API). */
  tokenKeyFile: string;
  tokenKid: string;
  /** Where the API's key set will be written, once the release's CLI has printed the public JWK. */
  jwksFile: string;
  signingKeyFile: string;
  signingPublicKeyFile: string;
  fingerprintSecret: string;
  /** The KEK keyring the release's CLI makes (`lethe keys init`). */
  kekFile: string;
}

export function makeKeys(dir: string): CheckKeys {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const write = (name: string, text: string, mode = 0o600) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text, { mode });
    return file;
  };
  const token = generateKeyPairSync('ed25519');
  const signing = generateKeyPairSync('ed25519');
  return {
    tokenKeyFile: write('token-key.pem', token.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
    tokenKid: 'release-check',
    jwksFile: path.join(dir, 'jwks.json'),
    signingKeyFile: write('signing-key.pem', signing.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
    signingPublicKeyFile: write(
      'signing-key.pub.pem',
      signing.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      0o644,
    ),
    fingerprintSecret: randomBytes(32).toString('base64url'),
    kekFile: path.join(dir, 'kek.json'),
  };
}

export interface CheckTarget {
  stack: StackManifest;
  apiPort: number;
  taskQueue: string;
}

/** A database and index prefix of the check's own, so it never writes into what the tests or the demo use. */
export const CHECK_DATABASE = 'lethe_release_check';
export const CHECK_INDEX_PREFIX = 'lethe-release-check';

export function releaseEnvironment(keys: CheckKeys, target: CheckTarget): Record<string, string> {
  const mongo = new URL(target.stack.mongoUri);
  mongo.pathname = `/${CHECK_DATABASE}`;
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    LETHE_ENV: 'production',
    LOG_LEVEL: 'info',
    TEMPORAL_ADDRESS: target.stack.temporalAddress,
    LETHE_TASK_QUEUE: target.taskQueue,
    MONGODB_URI: mongo.toString(),
    ELASTICSEARCH_URL: target.stack.elasticsearchUrl,
    LETHE_INDEX_PREFIX: CHECK_INDEX_PREFIX,
    SMTP_HOST: target.stack.smtp.host,
    SMTP_PORT: String(target.stack.smtp.port),
    LETHE_API_HOST: '127.0.0.1',
    LETHE_API_PORT: String(target.apiPort),
    LETHE_EMBEDDER: 'minilm',
    LETHE_EMBEDDING_MODEL_DIR: target.stack.embeddingModelDir,
    LETHE_TOKEN_JWKS_FILE: keys.jwksFile,
    LETHE_SIGNING_KEY_FILE: keys.signingKeyFile,
    LETHE_SIGNING_PUBLIC_KEY_FILE: keys.signingPublicKeyFile,
    LETHE_FINGERPRINT_SECRET: keys.fingerprintSecret,
    LETHE_KEK_FILE: keys.kekFile,
  };
}
