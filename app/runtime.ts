import { MongoClient, type Db } from 'mongodb';
import { Client as ElasticsearchClient } from '@elastic/elasticsearch';
import { Connection } from '@temporalio/client';
import nodemailer, { type Transporter } from 'nodemailer';
import fs from 'node:fs';
import { ConfigError, type Config } from '../src/config/config.js';
import { temporalConnectionOptions } from '../src/config/temporal-connection.js';
import { createLogger, type Logger } from '../src/observability/logger.js';
import { createContentCipher, type ContentCipher } from '../src/substrate/crypto/content-cipher.js';
import { createDataKeyVault } from '../src/substrate/crypto/data-key-vault.js';
import { createLocalKekFile, ensureLocalKekFile } from '../src/substrate/crypto/local-kek-file.js';
import { createAwsKmsKeks } from '../src/substrate/crypto/aws-kms-keks.js';
import type { KeyEncryptionKeys } from '../src/substrate/crypto/key-encryption-keys.port.js';
import type { DependencyProbe } from '../src/observability/readiness.js';
import { elasticsearchProbe, mongoProbe, smtpProbe, temporalProbe } from '../src/observability/dependency-probes.js';
import { createTracing, type Tracing } from '../src/observability/tracing.js';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createPostgresSnapshotHorizon, type SnapshotHorizon } from '../src/substrate/postgres/snapshot-horizon.js';

/** The clients a process needs, created once at its composition root and closed on shutdown. */
export interface Runtime {
  config: Config;
  log: Logger;
  mongo: MongoClient;
  db: Db;
  es: ElasticsearchClient;
  temporal: Connection;
  mail: Transporter;
  probes: DependencyProbe[];
  /** Seals content at rest under per-record data keys; shreds them on erasure. */
  cipher: ContentCipher;
  /** The PostgreSQL under FerretDB's snapshot horizon, read by the erasure's compaction; absent when not configured. */
  snapshots?: SnapshotHorizon;
  /** Spans of API requests, client calls, workflows and activities (off unless configured). */
  tracing: Tracing;
  close(): Promise<void>;
}

/**
 * The KEKs, where the config says they are. Development and test make their first epoch on first use (a keyring
 * file, or a key in the KMS); anywhere else a missing one stops the process, or the first write, naming what to run.
 */
function openKeks(config: Config): KeyEncryptionKeys & { close?(): void } {
  const kek = config.sealing.kek;
  const development = config.env !== 'production';
  if (kek.kind === 'aws-kms') return createAwsKmsKeks({ ...kek, createFirstEpoch: development });
  if (development) ensureLocalKekFile(kek.file);
  else if (!fs.existsSync(kek.file))
    throw new ConfigError('LETHE_KEK_FILE', `no keyring at ${kek.file} (make one with lethe keys init)`);
  return createLocalKekFile(kek.file);
}

/** Connections are lazy, so a process starts even while a dependency is down and the operators' readiness can say which. */
export function createRuntime(config: Config, name = 'lethe', options: { spanExporter?: SpanExporter } = {}): Runtime {
  const log = createLogger(config.logLevel, name);
  const tracing = createTracing({
    serviceName: name,
    ...(config.tracing.otlpUrl ? { otlpUrl: config.tracing.otlpUrl } : {}),
    ...(options.spanExporter ? { exporter: options.spanExporter } : {}),
  });
  const mongo = new MongoClient(config.mongo.uri, { serverSelectionTimeoutMS: 5000, maxPoolSize: 32 });
  const es = new ElasticsearchClient({ node: config.elasticsearch.url, requestTimeout: 60_000 });
  const temporal = Connection.lazy({ ...temporalConnectionOptions(config.temporal), connectTimeout: 5000 });
  const mail = nodemailer.createTransport({
    host: config.smtp.host,
    port: config.smtp.port,
    secure: false,
    ignoreTLS: true,
  });
  const db = mongo.db(config.mongo.dbName);
  const keks = openKeks(config);
  const snapshots = config.postgres.url ? createPostgresSnapshotHorizon(config.postgres.url) : undefined;
  const vault = createDataKeyVault(db, keks, {
    pollMs: config.sealing.feedPollMs,
    boundMs: config.sealing.cacheBoundMs,
    ...(config.sealing.rotationEveryMs ? { rotationEveryMs: config.sealing.rotationEveryMs } : {}),
  });
  return {
    config,
    log,
    mongo,
    db,
    cipher: createContentCipher(vault),
    ...(snapshots ? { snapshots } : {}),
    es,
    temporal,
    mail,
    probes: [mongoProbe(mongo), elasticsearchProbe(es), temporalProbe(temporal), smtpProbe(mail)],
    tracing,
    async close() {
      await tracing.shutdown().catch(() => undefined);
      vault.close();
      keks.close?.();
      await snapshots?.close().catch(() => undefined);
      await Promise.allSettled([mongo.close(), es.close(), temporal.close()]);
      mail.close();
    },
  };
}
