import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseConfig, type Config } from './config.js';

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * In development and test, secrets that are not set come from a development secrets file in the state directory
 * (generated once), so that `npm run demo` works on a fresh machine. Anywhere else (production, or LETHE_ENV not
 * set at all) nothing is generated: a missing secret stops the process, naming its variable.
 */
function developmentSecrets(env: NodeJS.ProcessEnv): Record<string, string> {
  const stateDir = path.resolve(env.LETHE_STATE_DIR ?? path.join(repoDir, '.stack'));
  const file = path.join(stateDir, 'dev-secrets.json');
  const keyFile = path.join(stateDir, 'dev-signing-key.pem');
  const publicKeyFile = path.join(stateDir, 'dev-signing-key.pub.pem');
  const kekFile = path.join(stateDir, 'dev-kek.json');
  fs.mkdirSync(stateDir, { recursive: true });
  if (!fs.existsSync(file)) {
    const secrets = {
      LETHE_TOKEN_SECRET: randomBytes(32).toString('base64url'),
      LETHE_FINGERPRINT_SECRET: randomBytes(32).toString('base64url'),
    };
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(secrets), { mode: 0o600 });
    fs.renameSync(`${file}.tmp`, file);
  }
  if (!fs.existsSync(keyFile)) {
    const { privateKey } = generateKeyPairSync('ed25519');
    fs.writeFileSync(`${keyFile}.tmp`, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    fs.renameSync(`${keyFile}.tmp`, keyFile);
  }
  if (!fs.existsSync(publicKeyFile)) {
    const publicKey = createPublicKey(fs.readFileSync(keyFile, 'utf8'));
    fs.writeFileSync(`${publicKeyFile}.tmp`, publicKey.export({ type: 'spki', format: 'pem' }));
    fs.renameSync(`${publicKeyFile}.tmp`, publicKeyFile);
  }
  const secrets = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
  // The pair is defaulted together or not at all: a key of the operator's own beside the generated public key
  // would have the API serve a key that verifies nothing the worker signs.
  const keys: Record<string, string> =
    env.LETHE_SIGNING_KEY_FILE || env.LETHE_SIGNING_PUBLIC_KEY_FILE
      ? {}
      : { LETHE_SIGNING_KEY_FILE: keyFile, LETHE_SIGNING_PUBLIC_KEY_FILE: publicKeyFile };
  // Keys of the operator's own replace the generated secret rather than sit beside it.
  if (env.LETHE_FINGERPRINT_KEYS) delete secrets.LETHE_FINGERPRINT_SECRET;
  // The KEK file itself is made by the runtime when it is missing (development and test only).
  // The local stack's PostgreSQL under FerretDB (trust on loopback), for the compaction's snapshot check.
  const postgres = `postgres://postgres@127.0.0.1:${env.LETHE_PG_PORT ?? '54329'}/ferretdb`;
  return {
    ...secrets,
    ...keys,
    ...(env.LETHE_KEK_FILE ? {} : { LETHE_KEK_FILE: kekFile }),
    LETHE_POSTGRES_URL: postgres,
    ...stackWitness(stateDir),
  };
}

/**
 * The local stack's witness, from what it wrote beside itself once it answered (`<state>/witness/witness.json`), so
 * that development and the tests get their checkpoints cosigned without configuring a key that each state directory
 * makes anew. `LETHE_WITNESSES` set (`[]` for none) wins.
 */
function stackWitness(stateDir: string): { LETHE_WITNESSES?: string } {
  let witness: { url?: unknown; verifierKey?: unknown; witnessctl?: unknown; db?: unknown } | undefined;
  try {
    witness = JSON.parse(fs.readFileSync(path.join(stateDir, 'witness', 'witness.json'), 'utf8')) as typeof witness;
  } catch {
    return {};
  }
  if (!witness || typeof witness.url !== 'string' || typeof witness.verifierKey !== 'string') return {};
  const enrol =
    typeof witness.witnessctl === 'string' && typeof witness.db === 'string'
      ? { enrol: { witnessctl: witness.witnessctl, db: witness.db } }
      : {};
  return { LETHE_WITNESSES: JSON.stringify([{ name: 'stack', url: witness.url, key: witness.verifierKey, ...enrol }]) };
}

/** Parses the process environment once; throws ConfigError naming the bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const generated = env.LETHE_ENV === 'development' || env.LETHE_ENV === 'test';
  const merged = generated ? { ...developmentSecrets(env), ...stripEmpty(env) } : env;
  return parseConfig({ LETHE_EMBEDDING_MODEL_DIR: defaultModelDir(env), ...merged });
}

/** Where `stack/embedding-model/fetch.sh` puts the local model (the same cache as the stack's builds). */
function defaultModelDir(env: NodeJS.ProcessEnv): string {
  const cache = env.LETHE_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'lethe');
  return path.join(cache, 'embedding-model', 'minilm-l6-v2-int8');
}

function stripEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => !!e[1]));
}
