import { z } from 'zod';
import { ConfigError } from './config-error.js';
import { witnessesConfig, type WitnessConfig } from './witnesses-config.js';

export { ConfigError };

const port = z.coerce.number().int().min(1).max(65535);
const secret = z.string().min(32, 'must be at least 32 characters');

const count = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** What one caller, one tenant and the HTTP server may take: defaults sized for one API process. */
const limitsSchema = z.object({
  LETHE_RATE_LIMIT_PER_PRINCIPAL: count(1, 1_000_000).default(1200),
  LETHE_RATE_LIMIT_PER_TENANT: count(1, 10_000_000).default(6000),
  LETHE_RATE_LIMIT_PER_ADDRESS: count(1, 1_000_000).default(600),
  LETHE_QUOTA_WRITES_PER_DAY: count(1, 1_000_000_000).default(1_000_000),
  LETHE_QUOTA_STORED_BYTES: count(1, Number.MAX_SAFE_INTEGER).default(10 * 1024 ** 3),
  LETHE_HTTP_CONNECTION_TIMEOUT_MS: count(1000, 3_600_000).default(120_000),
  LETHE_HTTP_REQUEST_TIMEOUT_MS: count(100, 600_000).default(30_000),
  /**
   * How long an idle kept-alive connection stays open. It must outlast the idle timeout of whatever reuses the
   * connection (AWS ALB and nginx: 60 s), or the balancer, or a client busy past the timeout, sends a request on a
   * socket the server has just closed, and the request is lost.
   */
  LETHE_HTTP_KEEP_ALIVE_TIMEOUT_MS: count(100, 600_000).default(65_000),
  /** Connections one client address may hold open at once, idle or not: kept-alive sockets are not free to hoard. */
  LETHE_HTTP_CONNECTIONS_PER_ADDRESS: count(1, 100_000).default(256),
  LETHE_HTTP_BODY_LIMIT_BYTES: count(1024, 64 * 1024 ** 2).default(1024 ** 2),
});

const schema = z.object({
  ...limitsSchema.shape,
  /** No default: a deployment that forgot it must not run on secrets it generated itself. */
  LETHE_ENV: z.enum(['development', 'test', 'production']),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^:]+:\d+$/, 'must be host:port')
    .default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  /** TLS to Temporal: `true` with the system's roots, or a CA file; a client certificate and key for mTLS. */
  LETHE_TEMPORAL_TLS: z.enum(['true', 'false']).optional(),
  LETHE_TEMPORAL_TLS_CA: z.string().min(1).optional(),
  LETHE_TEMPORAL_TLS_CERT: z.string().min(1).optional(),
  LETHE_TEMPORAL_TLS_KEY: z.string().min(1).optional(),
  LETHE_TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  LETHE_TEMPORAL_API_KEY: z.string().min(1).optional(),
  LETHE_TASK_QUEUE: z.string().min(1).default('lethe'),
  /**
   * How many workflows a worker keeps in memory between their tasks. Reviews and disputes wait days for a person, and
   * the SDK's default (from the heap size: about 2 300 at 4 GiB) let a few thousand held memories fill the workflow
   * thread's heap until it died. Past this many, the least recent is evicted and replayed from its history at its
   * next task.
   */
  LETHE_WORKER_MAX_CACHED_WORKFLOWS: count(2, 100_000).default(500),
  MONGODB_URI: z.string().url().default('mongodb://127.0.0.1:27017/lethe'),
  /**
   * The PostgreSQL under FerretDB (a user that may read pg_stat_activity), so that a compaction can show that no
   * snapshot older than it kept erased rows. Unset, certificates state the compacted stores at L3, unchecked.
   */
  LETHE_POSTGRES_URL: z
    .string()
    // Printable ASCII only: a control character (NUL, a newline) would reach the driver's connection string.
    .regex(/^postgres(ql)?:\/\/[\x21-\x7e]+$/, 'must be a postgres:// URL, printable ASCII without spaces')
    .optional(),
  ELASTICSEARCH_URL: z.string().url().default('http://127.0.0.1:9200'),
  LETHE_INDEX_PREFIX: z
    .string()
    .regex(/^[a-z][a-z0-9-]*$/, 'lower-case letters, digits and dashes')
    .default('lethe'),
  LETHE_EMBEDDING_DIMS: z.coerce.number().int().min(8).max(4096).optional(),
  LETHE_EMBEDDER: z.enum(['minilm', 'hashing', 'openai']).optional(),
  LETHE_EMBEDDING_MODEL_DIR: z.string().min(1).optional(),
  LETHE_EMBEDDING_THREADS: z.coerce.number().int().min(1).max(64).default(1),
  LETHE_EMBEDDINGS_URL: z.string().url().optional(),
  LETHE_EMBEDDINGS_MODEL: z.string().min(1).optional(),
  LETHE_EMBEDDINGS_API_KEY: z.string().min(1).optional(),
  LETHE_EMBEDDINGS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  SMTP_HOST: z.string().min(1).default('127.0.0.1'),
  SMTP_PORT: port.default(1025),
  LETHE_MAIL_FROM: z.string().email().default('lethe@localhost'),
  LETHE_OPERATOR_EMAIL: z.string().email().default('operator@localhost'),
  LETHE_DPO_EMAIL: z.string().email().default('dpo@localhost'),
  LETHE_REVIEWERS_EMAIL: z.string().email().default('reviewers@localhost'),
  LETHE_ESCALATION_EMAIL: z.string().email().default('review-escalation@localhost'),
  LETHE_API_HOST: z.string().min(1).default('127.0.0.1'),
  LETHE_API_PORT: port.default(8080),
  /**
   * The bearer token `/metrics` requires (API and worker). Unset, the series are served to anyone who reaches the
   * port: set it in production, or keep the port behind a firewall.
   */
  LETHE_METRICS_TOKEN: secret.optional(),
  /** The worker's own listener for `/metrics` and `/healthz`; off unless a port is given. */
  LETHE_WORKER_METRICS_PORT: port.optional(),
  LETHE_WORKER_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** The Temporal SDK's own Prometheus endpoint (pollers, task slots, schedule-to-start latency), on the same host. */
  LETHE_WORKER_TEMPORAL_METRICS_PORT: port.optional(),
  /** Where traces go (OTLP over HTTP, e.g. `http://collector:4318/v1/traces`); unset, no span is made. */
  LETHE_OTLP_TRACES_URL: z.string().url().optional(),
  /**
   * How long a process stopping on SIGTERM lets work in flight finish (API requests; the worker's activities, as its
   * `shutdownGraceTime`) before it exits 1. 25 s fits inside the 30 s a container runtime waits before SIGKILL.
   */
  LETHE_SHUTDOWN_GRACE_MS: count(0, 3_600_000).default(25_000),
  /**
   * The audit logs' origin: each tenant's log is `<origin>/<tenant>`, in its checkpoints and as its key's name. One
   * line of printable characters without spaces or `+` (a C2SP key name).
   */
  LETHE_LOG_ORIGIN: z
    .string()
    .regex(/^[\x21-\x2a\x2c-\x7e]{1,200}$/u, 'printable, without spaces or +')
    .default('lethe.local/audit'),
  /** The witnesses each new checkpoint is submitted to, as JSON (`witnesses-config.ts`); none when unset. */
  LETHE_WITNESSES: z.string().optional(),
  /** How often the worker signs a checkpoint of each audit log that grew. */
  LETHE_CHECKPOINT_INTERVAL_MS: count(200, 3_600_000).default(5_000),
  /** Pause between two views a consolidation run writes, so that a run yields to online writes and reads. */
  LETHE_CONSOLIDATION_PAUSE_MS: count(0, 600_000).default(250),
  /**
   * How long `POST …/consolidations` waits for its run before answering 202 (the run goes on; a second call joins it):
   * well inside the idle-socket timeout, so a long run never leaves its caller without an answer.
   */
  LETHE_CONSOLIDATION_WAIT_MS: count(1, 600_000).default(60_000),
  /** HS256, development only: production verifies EdDSA tokens against a key set (JWKS file or URL). */
  LETHE_TOKEN_SECRET: secret.optional(),
  LETHE_TOKEN_JWKS_FILE: z.string().min(1).optional(),
  LETHE_TOKEN_JWKS_URL: z.string().url().optional(),
  /** The longest lifetime a bearer token may have (exp − iat): longer ones are refused, and never minted. */
  LETHE_TOKEN_MAX_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .default(86_400),
  /** One fingerprint key (id `k0`); or LETHE_FINGERPRINT_KEYS, several with ids, the first current. */
  LETHE_FINGERPRINT_SECRET: secret.optional(),
  LETHE_FINGERPRINT_KEYS: z.string().min(1).optional(),
  /** The certificate-signing private key: the worker's (it issues certificates). */
  LETHE_SIGNING_KEY_FILE: z.string().min(1).optional(),
  /** Its public key: the API's (it serves the key, and never signs). */
  LETHE_SIGNING_PUBLIC_KEY_FILE: z.string().min(1).optional(),
  /**
   * Where the key-encryption keys that wrap every record's data key live: a local keyring file (`local-file`,
   * generated for development) or AWS KMS (`aws-kms`, or any endpoint speaking its API). Content is sealed at rest
   * under per-record data keys, and nothing opens without them.
   */
  LETHE_KMS: z.enum(['local-file', 'aws-kms']).default('local-file'),
  LETHE_KEK_FILE: z.string().min(1).optional(),
  LETHE_AWS_KMS_REGION: z.string().min(1).max(64).optional(),
  LETHE_AWS_KMS_ENDPOINT: z.string().url().optional(),
  /** The alias prefix of this deployment's KEK epochs (`<prefix>/epoch-<n>`). */
  LETHE_AWS_KMS_ALIAS_PREFIX: z
    .string()
    .regex(/^alias\/[A-Za-z0-9/_-]{1,200}$/, 'must look like alias/name (letters, digits, / _ -)')
    .refine((v) => !v.startsWith('alias/aws'), 'alias/aws… is reserved by AWS')
    .default('alias/lethe'),
  /** The KMS's waiting period before a destroyed epoch's key material is deleted (AWS allows 7–30 days). */
  LETHE_AWS_KMS_DELETION_WINDOW_DAYS: z.coerce.number().int().min(7).max(30).default(7),
  /** How long one KMS call may wait for its answer before it is retried (3 attempts in all), then refused as 503. */
  LETHE_AWS_KMS_TIMEOUT_MS: count(200, 60_000).default(5000),
  /** How often each process reads the feed of destroyed data keys, and the longest it trusts its memory without it. */
  LETHE_KEY_FEED_POLL_MS: count(100, 60_000).default(1000),
  LETHE_KEY_CACHE_BOUND_MS: count(500, 300_000).default(5000),
  /**
   * How often the worker's Temporal Schedule rotates the KEKs (`<n>m`, `<n>h` or `<n>d`, from 15 minutes to 90 days),
   * or `off`. A rotation is what makes an erasure's copies in the log and backups unreadable, so certificates date
   * that lapse from this interval; only an explicit `off` leaves rotation to an operator (`lethe keys rotate`).
   */
  LETHE_KEK_ROTATION_EVERY: z
    .string()
    .regex(/^(off|[1-9][0-9]{0,5}[mhd])$/, 'must be off, or a whole number of minutes, hours or days, such as 24h')
    .default('24h')
    .transform((v, ctx) => {
      if (v === 'off') return null;
      const ms = Number(v.slice(0, -1)) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[v.slice(-1) as 'm' | 'h' | 'd'];
      if (ms < 15 * 60_000 || ms > 90 * 86_400_000) {
        ctx.addIssue({ code: 'custom', message: 'must be between 15m and 90d, or off' });
        return z.NEVER;
      }
      return ms;
    }),
  /** How long an access package stays downloadable before it is erased (default 7 days; at most 30). */
  LETHE_ACCESS_DELIVERY_SECONDS: count(1, 30 * 86_400).default(7 * 86_400),
  LETHE_DERIVATION_AUDIT: z.enum(['enforce', 'record']).default('enforce'),
  LETHE_VERIFIER: z.enum(['deterministic', 'openai-compatible']).default('deterministic'),
  LETHE_VERIFIER_URL: z.string().url().optional(),
  LETHE_VERIFIER_API_KEY: z.string().min(1).optional(),
  LETHE_VERIFIER_MODEL: z.string().min(1).max(256).default('default'),
  LETHE_VERIFIER_TIMEOUT_MS: z.coerce.number().int().min(10).max(600_000).default(10_000),
  /**
   * The deterministic verifier's CPU time per evidence view, in its own thread: past it the thread is stopped and
   * the audit is unresolved. Two seconds is about twice what one view at the evidence budget below costs a memory at
   * the obligation budget (64) on a small machine; an honest memory takes milliseconds.
   */
  LETHE_VERIFIER_DEADLINE_MS: z.coerce.number().int().min(10).max(600_000).default(2_000),
  /** Threads the deterministic verifier runs on; a view waiting for one counts against the audit's timeout. */
  LETHE_VERIFIER_THREADS: z.coerce.number().int().min(1).max(64).default(2),
  /**
   * The most evidence one audit reads, in UTF-8 bytes: its citations and parents (more, and the memory is left
   * unresolved for a reviewer), then as much retrieved history as fits. 128 KiB holds 256 citations of half a KiB,
   * and the verifier's cost grows with it (about a second per view at the obligation budget): a memory citing more
   * is a document, not a fact, and a reviewer reads it.
   */
  LETHE_DERIVATION_AUDIT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(128 * 1024),
  /**
   * The most evidence one batch's audits read, in UTF-8 bytes: half for the subjects' history (shared equally among
   * them), half for citations (in batch order; a memory whose citations no longer fit is unresolved). 8 MiB is what
   * the audit tokenises in about a second, and a batch of honest memories about one conversation reads far less;
   * it bounds what 32 subjects of 2 000 events of 32 KB, or 1 000 memories of 256 citations, could make one write cost.
   */
  LETHE_DERIVATION_BATCH_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .max(1024 * 1024 * 1024)
    .default(8 * 1024 * 1024),
});

/**
 * Which embedder fills the dense half of the index. `minilm` (the local model) outside tests; `hashing` is
 * the lexical stand-in the test suite's fixtures are ranked with; `openai` is any OpenAI-compatible endpoint.
 */
export type EmbedderConfig =
  | { kind: 'minilm'; modelDir: string; threads: number }
  | { kind: 'hashing'; dims: number }
  | { kind: 'openai'; url: string; model: string; dims: number; apiKey?: string; timeoutMs: number };

/**
 * Limits on callers and on the HTTP server. Rate limits are requests per minute: per principal (in its tenant), per
 * tenant, and per client address for calls that are not authenticated. Quotas are per tenant: records written per
 * UTC day, and bytes of content stored. Timeouts are in milliseconds.
 */
export interface ApiLimits {
  rate: { perPrincipal: number; perTenant: number; perAddress: number };
  quota: { writesPerDay: number; storedBytes: number };
  http: {
    connectionTimeoutMs: number;
    requestTimeoutMs: number;
    keepAliveTimeoutMs: number;
    connectionsPerAddress: number;
    bodyLimitBytes: number;
  };
}

function apiLimits(e: z.infer<typeof limitsSchema>): ApiLimits {
  return {
    rate: {
      perPrincipal: e.LETHE_RATE_LIMIT_PER_PRINCIPAL,
      perTenant: e.LETHE_RATE_LIMIT_PER_TENANT,
      perAddress: e.LETHE_RATE_LIMIT_PER_ADDRESS,
    },
    quota: { writesPerDay: e.LETHE_QUOTA_WRITES_PER_DAY, storedBytes: e.LETHE_QUOTA_STORED_BYTES },
    http: {
      connectionTimeoutMs: e.LETHE_HTTP_CONNECTION_TIMEOUT_MS,
      requestTimeoutMs: e.LETHE_HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.LETHE_HTTP_KEEP_ALIVE_TIMEOUT_MS,
      connectionsPerAddress: e.LETHE_HTTP_CONNECTIONS_PER_ADDRESS,
      bodyLimitBytes: e.LETHE_HTTP_BODY_LIMIT_BYTES,
    },
  };
}

/** The limits when nothing is configured (a server built without a configuration, as some tests do). */
export function defaultApiLimits(): ApiLimits {
  return apiLimits(limitsSchema.parse({}));
}

/** Lethe's configuration, parsed once at boot; activities receive it and never read the environment. */
export interface Config {
  env: 'development' | 'test' | 'production';
  logLevel: string;
  temporal: {
    address: string;
    namespace: string;
    taskQueue: string;
    /** Workflows a worker keeps in memory between their tasks (the rest are replayed when they next run). */
    maxCachedWorkflows: number;
    /** Files are read when the connection options are built (`temporalConnectionOptions`), at start. */
    tls?: { caFile?: string; certFile?: string; keyFile?: string; serverName?: string };
    apiKey?: string;
  };
  mongo: { uri: string; dbName: string };
  /** The PostgreSQL under FerretDB, read for the compaction's snapshot horizon; absent when not configured. */
  postgres: { url?: string };
  elasticsearch: { url: string; indexPrefix: string };
  embedder: EmbedderConfig;
  smtp: {
    host: string;
    port: number;
    from: string;
    operatorEmail: string;
    dpoEmail: string;
    reviewersEmail: string;
    escalationEmail: string;
  };
  api: { host: string; port: number };
  /** Who may read `/metrics` (no token: anyone who reaches the port), and where the worker serves it. */
  metrics: {
    token?: string;
    worker?: { host: string; port: number };
    /** Where the worker's Temporal runtime serves its own series (`temporal_…`), if anywhere. */
    temporalRuntime?: { host: string; port: number };
  };
  /** The OTLP/HTTP endpoint traces are exported to, if any. */
  tracing: { otlpUrl?: string };
  /** What in-flight work gets on SIGTERM before the process exits 1. */
  shutdown: { graceMs: number };
  /** The audit logs' Merkle trees and signed checkpoints. */
  log: { origin: string; checkpointEveryMs: number; witnesses: WitnessConfig[] };
  /** Consolidation runs' pause between two views' writes. */
  consolidation: { pauseMs: number; waitMs: number };
  /**
   * The certificate key files: the private one is required where certificates are issued (the worker), the public
   * one where the key is only served (the API); each process checks for its own at start.
   */
  secrets: { fingerprintKeys: FingerprintKey[]; signingKeyFile?: string; signingPublicKeyFile?: string };
  /** Content sealed at rest: where the KEKs are, and how fast a destroyed data key is forgotten everywhere. */
  sealing: {
    kek: KekConfig;
    feedPollMs: number;
    cacheBoundMs: number;
    /** The scheduled KEK rotation's interval; null when it is off (`LETHE_KEK_ROTATION_EVERY=off`). */
    rotationEveryMs: number | null;
  };
  /** Access and portability requests: how long a package is kept for the DPO to download. */
  access: { deliveryWindowMs: number };
  /**
   * Bearer tokens: the longest lifetime accepted or minted, in seconds; the Ed25519 public keys they are verified
   * against (a JWKS file or URL, keys named by `kid`); and, outside production only, the HS256 secret.
   */
  tokens: { maxTtlSeconds: number; jwksFile?: string; jwksUrl?: string; hs256Secret?: string };
  limits: ApiLimits;
  /**
   * The write-time derivation audit: `enforce` lets its verdict decide admission (derivation-admission policy);
   * `record` only keeps the verdict on the record (a rollout stage). The verifier is the deterministic default
   * or an OpenAI-compatible chat endpoint; a verifier that does not answer within the timeout leaves the audit
   * unresolved.
   */
  derivation: {
    mode: 'enforce' | 'record';
    verifier:
      | { kind: 'deterministic'; deadlineMs: number; threads: number }
      | { kind: 'openai-compatible'; url: string; model: string; apiKey?: string };
    timeoutMs: number;
    /** Evidence bytes one audit, and one batch of audits, may read (see the variables' comments). */
    maxAuditBytes: number;
    maxBatchBytes: number;
  };
}

function embedderConfig(e: z.infer<typeof schema>): EmbedderConfig {
  const kind = e.LETHE_EMBEDDER ?? (e.LETHE_ENV === 'test' ? 'hashing' : 'minilm');
  switch (kind) {
    case 'hashing':
      return { kind, dims: e.LETHE_EMBEDDING_DIMS ?? 256 };
    case 'minilm':
      if (e.LETHE_EMBEDDING_DIMS !== undefined && e.LETHE_EMBEDDING_DIMS !== 384) {
        throw new ConfigError('LETHE_EMBEDDING_DIMS', 'the minilm embedder has 384 dimensions');
      }
      if (!e.LETHE_EMBEDDING_MODEL_DIR) throw new ConfigError('LETHE_EMBEDDING_MODEL_DIR', 'is required');
      return { kind, modelDir: e.LETHE_EMBEDDING_MODEL_DIR, threads: e.LETHE_EMBEDDING_THREADS };
    case 'openai':
      if (!e.LETHE_EMBEDDINGS_URL)
        throw new ConfigError('LETHE_EMBEDDINGS_URL', 'is required when LETHE_EMBEDDER=openai');
      if (!e.LETHE_EMBEDDINGS_MODEL) {
        throw new ConfigError('LETHE_EMBEDDINGS_MODEL', 'is required when LETHE_EMBEDDER=openai');
      }
      if (e.LETHE_EMBEDDING_DIMS === undefined) {
        throw new ConfigError(
          'LETHE_EMBEDDING_DIMS',
          "is required when LETHE_EMBEDDER=openai (the model's vector length)",
        );
      }
      return {
        kind,
        url: e.LETHE_EMBEDDINGS_URL,
        model: e.LETHE_EMBEDDINGS_MODEL,
        dims: e.LETHE_EMBEDDING_DIMS,
        ...(e.LETHE_EMBEDDINGS_API_KEY ? { apiKey: e.LETHE_EMBEDDINGS_API_KEY } : {}),
        timeoutMs: e.LETHE_EMBEDDINGS_TIMEOUT_MS,
      };
  }
}

/** A fingerprint key and its id; the first configured is current. */
export interface FingerprintKey {
  id: string;
  secret: string;
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * `LETHE_FINGERPRINT_KEYS` (`id:secret,id2:secret2`, the first current; the others still match what was hashed
 * under them), or `LETHE_FINGERPRINT_SECRET` alone as the key `k0`. Errors name the key id, never a secret.
 */
function fingerprintKeys(e: z.infer<typeof schema>): FingerprintKey[] {
  const variable = 'LETHE_FINGERPRINT_KEYS';
  if (e.LETHE_FINGERPRINT_KEYS && e.LETHE_FINGERPRINT_SECRET) {
    throw new ConfigError(variable, 'set either LETHE_FINGERPRINT_KEYS or LETHE_FINGERPRINT_SECRET, not both');
  }
  if (!e.LETHE_FINGERPRINT_KEYS) {
    if (!e.LETHE_FINGERPRINT_SECRET)
      throw new ConfigError('LETHE_FINGERPRINT_SECRET', 'is required (or LETHE_FINGERPRINT_KEYS)');
    return [{ id: 'k0', secret: e.LETHE_FINGERPRINT_SECRET }];
  }
  const keys = e.LETHE_FINGERPRINT_KEYS.split(',').map((entry, i) => {
    const at = entry.indexOf(':');
    const id = at < 0 ? '' : entry.slice(0, at).trim();
    const secretValue = at < 0 ? '' : entry.slice(at + 1).trim();
    if (!KEY_ID.test(id))
      throw new ConfigError(variable, `entry ${i + 1}: expected id:secret, the id 1-32 letters, digits, "_" or "-"`);
    if (secretValue.length < 32)
      throw new ConfigError(variable, `key ${id}: the secret must be at least 32 characters`);
    return { id, secret: secretValue };
  });
  const ids = keys.map((k) => k.id);
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated) throw new ConfigError(variable, `key ${repeated} is listed twice`);
  return keys;
}

/** TLS and the API key for Temporal; a client certificate without its key (or the reverse) is refused. */
function temporalSecurity(e: z.infer<typeof schema>): Pick<Config['temporal'], 'tls' | 'apiKey'> {
  if (!!e.LETHE_TEMPORAL_TLS_CERT !== !!e.LETHE_TEMPORAL_TLS_KEY) {
    const missing = e.LETHE_TEMPORAL_TLS_CERT ? 'LETHE_TEMPORAL_TLS_KEY' : 'LETHE_TEMPORAL_TLS_CERT';
    throw new ConfigError(missing, 'is required: mTLS needs both the client certificate and its key');
  }
  const files = !!(e.LETHE_TEMPORAL_TLS_CA || e.LETHE_TEMPORAL_TLS_CERT || e.LETHE_TEMPORAL_TLS_SERVER_NAME);
  if (e.LETHE_TEMPORAL_TLS === 'false' && files) {
    throw new ConfigError('LETHE_TEMPORAL_TLS', 'is false, yet TLS files or a server name are set');
  }
  const tls =
    e.LETHE_TEMPORAL_TLS === 'true' || files
      ? {
          ...(e.LETHE_TEMPORAL_TLS_CA ? { caFile: e.LETHE_TEMPORAL_TLS_CA } : {}),
          ...(e.LETHE_TEMPORAL_TLS_CERT
            ? { certFile: e.LETHE_TEMPORAL_TLS_CERT, keyFile: e.LETHE_TEMPORAL_TLS_KEY! }
            : {}),
          ...(e.LETHE_TEMPORAL_TLS_SERVER_NAME ? { serverName: e.LETHE_TEMPORAL_TLS_SERVER_NAME } : {}),
        }
      : undefined;
  return { ...(tls ? { tls } : {}), ...(e.LETHE_TEMPORAL_API_KEY ? { apiKey: e.LETHE_TEMPORAL_API_KEY } : {}) };
}

/** The KEKs' home, as the process opens it. */
export type KekConfig =
  | { kind: 'local-file'; file: string }
  | {
      kind: 'aws-kms';
      region: string;
      endpoint?: string;
      aliasPrefix: string;
      deletionWindowDays: number;
      timeouts: { connectMs: number; requestMs: number };
    };

function kekConfig(e: z.infer<typeof schema>): KekConfig {
  if (e.LETHE_KMS === 'local-file') {
    if (!e.LETHE_KEK_FILE) throw new ConfigError('LETHE_KEK_FILE', 'is required when LETHE_KMS is local-file');
    return { kind: 'local-file', file: e.LETHE_KEK_FILE };
  }
  if (!e.LETHE_AWS_KMS_REGION) throw new ConfigError('LETHE_AWS_KMS_REGION', 'is required when LETHE_KMS is aws-kms');
  return {
    kind: 'aws-kms',
    region: e.LETHE_AWS_KMS_REGION,
    ...(e.LETHE_AWS_KMS_ENDPOINT ? { endpoint: e.LETHE_AWS_KMS_ENDPOINT } : {}),
    aliasPrefix: e.LETHE_AWS_KMS_ALIAS_PREFIX,
    deletionWindowDays: e.LETHE_AWS_KMS_DELETION_WINDOW_DAYS,
    timeouts: { connectMs: Math.min(2_000, e.LETHE_AWS_KMS_TIMEOUT_MS), requestMs: e.LETHE_AWS_KMS_TIMEOUT_MS },
  };
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  const result = schema.safeParse(env);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'environment');
    const message =
      env[variable] !== undefined
        ? issue.message
        : variable === 'LETHE_ENV'
          ? 'is required: development, test or production (secrets and keys are generated only for development and test)'
          : 'is required';
    throw new ConfigError(variable, message);
  }
  const e = result.data;
  if (e.LETHE_VERIFIER === 'openai-compatible' && !e.LETHE_VERIFIER_URL) {
    throw new ConfigError('LETHE_VERIFIER_URL', 'is required when LETHE_VERIFIER is openai-compatible');
  }
  if (e.LETHE_DERIVATION_BATCH_MAX_BYTES < e.LETHE_DERIVATION_AUDIT_MAX_BYTES) {
    throw new ConfigError('LETHE_DERIVATION_BATCH_MAX_BYTES', 'must be at least LETHE_DERIVATION_AUDIT_MAX_BYTES');
  }
  if (e.LETHE_TOKEN_JWKS_FILE && e.LETHE_TOKEN_JWKS_URL) {
    throw new ConfigError('LETHE_TOKEN_JWKS_URL', 'set either LETHE_TOKEN_JWKS_FILE or LETHE_TOKEN_JWKS_URL, not both');
  }
  if (e.LETHE_ENV === 'production' && e.LETHE_TOKEN_SECRET) {
    // One shared secret would let whoever verifies tokens also mint them, for every tenant.
    throw new ConfigError(
      'LETHE_TOKEN_SECRET',
      'HS256 tokens are for development; in production set LETHE_TOKEN_JWKS_FILE or LETHE_TOKEN_JWKS_URL',
    );
  }
  if (e.LETHE_KEY_CACHE_BOUND_MS <= e.LETHE_KEY_FEED_POLL_MS) {
    throw new ConfigError('LETHE_KEY_CACHE_BOUND_MS', 'must be greater than LETHE_KEY_FEED_POLL_MS');
  }
  const dbName = new URL(e.MONGODB_URI).pathname.replace(/^\//, '') || 'lethe';
  return {
    env: e.LETHE_ENV,
    logLevel: e.LOG_LEVEL,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.LETHE_TASK_QUEUE,
      maxCachedWorkflows: e.LETHE_WORKER_MAX_CACHED_WORKFLOWS,
      ...temporalSecurity(e),
    },
    mongo: { uri: e.MONGODB_URI, dbName },
    postgres: e.LETHE_POSTGRES_URL ? { url: e.LETHE_POSTGRES_URL } : {},
    elasticsearch: { url: e.ELASTICSEARCH_URL, indexPrefix: e.LETHE_INDEX_PREFIX },
    embedder: embedderConfig(e),
    smtp: {
      host: e.SMTP_HOST,
      port: e.SMTP_PORT,
      from: e.LETHE_MAIL_FROM,
      operatorEmail: e.LETHE_OPERATOR_EMAIL,
      dpoEmail: e.LETHE_DPO_EMAIL,
      reviewersEmail: e.LETHE_REVIEWERS_EMAIL,
      escalationEmail: e.LETHE_ESCALATION_EMAIL,
    },
    api: { host: e.LETHE_API_HOST, port: e.LETHE_API_PORT },
    metrics: {
      ...(e.LETHE_METRICS_TOKEN ? { token: e.LETHE_METRICS_TOKEN } : {}),
      ...(e.LETHE_WORKER_METRICS_PORT
        ? { worker: { host: e.LETHE_WORKER_METRICS_HOST, port: e.LETHE_WORKER_METRICS_PORT } }
        : {}),
      ...(e.LETHE_WORKER_TEMPORAL_METRICS_PORT
        ? { temporalRuntime: { host: e.LETHE_WORKER_METRICS_HOST, port: e.LETHE_WORKER_TEMPORAL_METRICS_PORT } }
        : {}),
    },
    tracing: e.LETHE_OTLP_TRACES_URL ? { otlpUrl: e.LETHE_OTLP_TRACES_URL } : {},
    shutdown: { graceMs: e.LETHE_SHUTDOWN_GRACE_MS },
    log: {
      origin: e.LETHE_LOG_ORIGIN,
      checkpointEveryMs: e.LETHE_CHECKPOINT_INTERVAL_MS,
      witnesses: witnessesConfig(e.LETHE_WITNESSES),
    },
    consolidation: { pauseMs: e.LETHE_CONSOLIDATION_PAUSE_MS, waitMs: e.LETHE_CONSOLIDATION_WAIT_MS },
    secrets: {
      fingerprintKeys: fingerprintKeys(e),
      ...(e.LETHE_SIGNING_KEY_FILE ? { signingKeyFile: e.LETHE_SIGNING_KEY_FILE } : {}),
      ...(e.LETHE_SIGNING_PUBLIC_KEY_FILE ? { signingPublicKeyFile: e.LETHE_SIGNING_PUBLIC_KEY_FILE } : {}),
    },
    sealing: {
      kek: kekConfig(e),
      feedPollMs: e.LETHE_KEY_FEED_POLL_MS,
      cacheBoundMs: e.LETHE_KEY_CACHE_BOUND_MS,
      rotationEveryMs: e.LETHE_KEK_ROTATION_EVERY,
    },
    access: { deliveryWindowMs: e.LETHE_ACCESS_DELIVERY_SECONDS * 1000 },
    tokens: {
      maxTtlSeconds: e.LETHE_TOKEN_MAX_TTL_SECONDS,
      ...(e.LETHE_TOKEN_JWKS_FILE ? { jwksFile: e.LETHE_TOKEN_JWKS_FILE } : {}),
      ...(e.LETHE_TOKEN_JWKS_URL ? { jwksUrl: e.LETHE_TOKEN_JWKS_URL } : {}),
      ...(e.LETHE_TOKEN_SECRET ? { hs256Secret: e.LETHE_TOKEN_SECRET } : {}),
    },
    limits: apiLimits(e),
    derivation: {
      mode: e.LETHE_DERIVATION_AUDIT,
      verifier:
        e.LETHE_VERIFIER === 'openai-compatible'
          ? {
              kind: 'openai-compatible',
              url: e.LETHE_VERIFIER_URL!,
              model: e.LETHE_VERIFIER_MODEL,
              ...(e.LETHE_VERIFIER_API_KEY ? { apiKey: e.LETHE_VERIFIER_API_KEY } : {}),
            }
          : { kind: 'deterministic', deadlineMs: e.LETHE_VERIFIER_DEADLINE_MS, threads: e.LETHE_VERIFIER_THREADS },
      timeoutMs: e.LETHE_VERIFIER_TIMEOUT_MS,
      maxAuditBytes: e.LETHE_DERIVATION_AUDIT_MAX_BYTES,
      maxBatchBytes: e.LETHE_DERIVATION_BATCH_MAX_BYTES,
    },
  };
}
