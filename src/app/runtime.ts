import { MongoClient, type Db } from 'mongodb';
import { Client as ElasticsearchClient } from '@elastic/elasticsearch';
import { Connection } from '@temporalio/client';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../config/config.js';
import { temporalConnectionOptions } from '../config/temporal-connection.js';
import { createLogger, type Logger } from '../observability/logger.js';
import type { DependencyProbe } from '../observability/readiness.js';
import { elasticsearchProbe, mongoProbe, smtpProbe, temporalProbe } from '../observability/dependency-probes.js';

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
  close(): Promise<void>;
}

/** Connections are lazy, so a process starts even while a dependency is down and the operators' readiness can say which. */
export function createRuntime(config: Config, name = 'lethe'): Runtime {
  const log = createLogger(config.logLevel, name);
  const mongo = new MongoClient(config.mongo.uri, { serverSelectionTimeoutMS: 5000, maxPoolSize: 32 });
  const es = new ElasticsearchClient({ node: config.elasticsearch.url, requestTimeout: 60_000 });
  const temporal = Connection.lazy({ ...temporalConnectionOptions(config.temporal), connectTimeout: 5000 });
  const mail = nodemailer.createTransport({
    host: config.smtp.host,
    port: config.smtp.port,
    secure: false,
    ignoreTLS: true,
  });
  return {
    config,
    log,
    mongo,
    db: mongo.db(config.mongo.dbName),
    es,
    temporal,
    mail,
    probes: [mongoProbe(mongo), elasticsearchProbe(es), temporalProbe(temporal), smtpProbe(mail)],
    async close() {
      await Promise.allSettled([mongo.close(), es.close(), temporal.close()]);
      mail.close();
    },
  };
}
