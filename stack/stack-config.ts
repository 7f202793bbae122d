import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the local stack lives and listens; every address comes from the same variables the application reads. */
export interface StackConfig {
  repoDir: string;
  stateDir: string;
  cacheDir: string;
  temporal: { host: string; port: number; namespace: string };
  postgres: { port: number };
  mongo: { uri: string; host: string; port: number };
  elasticsearch: { url: string; host: string; port: number };
  smtp: { host: string; port: number; captureDir: string };
  /** An emulator of the AWS KMS API, for the aws-kms KEK adapter's tests (`LETHE_KMS_EMULATOR_ADDRESS`). */
  kms: { host: string; port: number; url: string };
  /** An independent C2SP tlog-witness (litewitness) that cosigns Lethe's checkpoints (`LETHE_WITNESS_ADDRESS`). */
  witness: { host: string; port: number; url: string; dir: string };
  /** `LETHE_STACK_SERVICES`: a subset of servers to manage (all when unset). */
  only?: string[];
}

export const STACK_SERVICE_NAMES = [
  'temporal',
  'postgres',
  'ferretdb',
  'elasticsearch',
  'smtp',
  'kms',
  'witness',
] as const;

/** What the running stack looks like, for tests and tools that need the artifacts' paths. */
export interface StackManifest {
  temporalAddress: string;
  mongoUri: string;
  elasticsearchUrl: string;
  smtp: { host: string; port: number; captureDir: string };
  temporalTestServer: string;
  /** The local sentence-embedding model's directory (`model.onnx`, `tokenizer.json`). */
  embeddingModelDir: string;
  /** The local witness, for the tests and a development `LETHE_WITNESSES` (absent when the stack runs without it). */
  witness?: StackWitness;
}

/** What a process needs to submit checkpoints to the stack's witness, and to tell it about a new log. */
export interface StackWitness {
  name: string;
  url: string;
  /** The witness's cosignature verifier key, `<name>+<key id>+<base64(0x04 ‖ key)>`. */
  verifierKey: string;
  /** litewitness's database and the tool that adds logs to it (while it runs). */
  db: string;
  witnessctl: string;
}

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function hostPort(value: string, variable: string): { host: string; port: number } {
  const match = /^([^:/]+):(\d+)$/.exec(value);
  if (!match) throw new Error(`${variable} must be host:port, got "${value}"`);
  return { host: match[1]!, port: Number(match[2]) };
}

function urlHostPort(value: string, variable: string, defaultPort: number): { host: string; port: number } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${variable} must be a URL, got "${value}"`);
  }
  return { host: url.hostname, port: url.port ? Number(url.port) : defaultPort };
}

function port(value: string, variable: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${variable} must be a TCP port, got "${value}"`);
  return n;
}

export function loadStackConfig(env: NodeJS.ProcessEnv = process.env): StackConfig {
  const stateDir = path.resolve(env.LETHE_STATE_DIR ?? path.join(repoDir, '.stack'));
  const cacheDir = path.resolve(env.LETHE_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'lethe'));
  const temporalAddress = env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const mongoUri = env.MONGODB_URI ?? 'mongodb://127.0.0.1:27017/lethe';
  const esUrl = env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200';
  const kms = hostPort(env.LETHE_KMS_EMULATOR_ADDRESS ?? '127.0.0.1:4599', 'LETHE_KMS_EMULATOR_ADDRESS');
  const witness = hostPort(env.LETHE_WITNESS_ADDRESS ?? '127.0.0.1:7380', 'LETHE_WITNESS_ADDRESS');
  const only = env.LETHE_STACK_SERVICES?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of only ?? []) {
    if (!(STACK_SERVICE_NAMES as readonly string[]).includes(name)) {
      throw new Error(`LETHE_STACK_SERVICES: unknown server "${name}" (known: ${STACK_SERVICE_NAMES.join(', ')})`);
    }
  }
  return {
    ...(only ? { only } : {}),
    repoDir,
    stateDir,
    cacheDir,
    temporal: { ...hostPort(temporalAddress, 'TEMPORAL_ADDRESS'), namespace: env.TEMPORAL_NAMESPACE ?? 'default' },
    postgres: { port: port(env.LETHE_PG_PORT ?? '54329', 'LETHE_PG_PORT') },
    mongo: { uri: mongoUri, ...urlHostPort(mongoUri, 'MONGODB_URI', 27017) },
    elasticsearch: { url: esUrl, ...urlHostPort(esUrl, 'ELASTICSEARCH_URL', 9200) },
    smtp: {
      host: env.SMTP_HOST ?? '127.0.0.1',
      port: port(env.SMTP_PORT ?? '1025', 'SMTP_PORT'),
      captureDir: path.resolve(env.LETHE_SMTP_CAPTURE_DIR ?? path.join(stateDir, 'mail')),
    },
    kms: { ...kms, url: `http://${kms.host}:${kms.port}` },
    witness: { ...witness, url: `http://${witness.host}:${witness.port}`, dir: path.join(stateDir, 'witness') },
  };
}

/**
 * Where the local PostgreSQL keeps its cluster. PostgreSQL runs as the `postgres` user, which cannot enter a
 * checkout inside a private directory (mode 0700: `mktemp -d`, `/root`). So the cluster lives outside the
 * checkout, in a directory of its own under /var/tmp named by a hash of the state directory's path (a second
 * checkout, or a second state directory, gets another one), and `<state>/postgres/data` is a symbolic link to it.
 * Everything else of the stack stays in the state directory. A cluster created inside the state directory before
 * this placement (a real directory there, not a link) stays where it is: it exists only where `postgres` reached it.
 */
export interface PostgresPlacement {
  /** The cluster's data directory (holds `postmaster.pid` and the Unix socket). */
  dataDir: string;
  /** The directory under /var/tmp that holds `dataDir`; undefined for a cluster inside the state directory. */
  home: string | undefined;
  /** `<state>/postgres/data`: the link to `dataDir`, or `dataDir` itself for a cluster inside the state directory. */
  link: string;
}

export const POSTGRES_HOME_PARENT = '/var/tmp';

export function postgresPlacement(stateDir: string): PostgresPlacement {
  const link = path.join(stateDir, 'postgres', 'data');
  let inside = false;
  try {
    inside = fs.lstatSync(link).isDirectory() && fs.existsSync(path.join(link, 'PG_VERSION'));
  } catch {
    inside = false;
  }
  if (inside) return { dataDir: link, home: undefined, link };
  const hash = createHash('sha256').update(path.resolve(stateDir)).digest('hex').slice(0, 12);
  const home = path.join(POSTGRES_HOME_PARENT, `lethe-postgres-${hash}`);
  return { dataDir: path.join(home, 'data'), home, link };
}

/** Reads the manifest `stack:up` wrote; tests use it to find the time-skipping server. */
export function readStackManifest(config: StackConfig = loadStackConfig()): StackManifest {
  const file = path.join(config.stateDir, 'stack.json');
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as StackManifest;
  } catch {
    throw new Error(`no stack manifest at ${file}: run npm run stack:up`);
  }
}
