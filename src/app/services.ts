import { Client } from '@temporalio/client';
import type { Runtime } from './runtime.js';
import { createFingerprinter } from '../substrate/fingerprint.js';
import { createMongoEventStore } from '../substrate/events/event-store.js';
import { createMongoMemoryStore } from '../substrate/memories/memory-store.js';
import { createMongoLineageStore } from '../substrate/lineage/lineage-store.js';
import { createMongoTombstoneStore } from '../substrate/tombstones/tombstone-store.js';
import { createMongoStagingStore } from '../substrate/staging/staging-store.js';
import { createHashingEmbedder } from '../substrate/search/hashing-embedder.js';
import { createElasticsearchSearchIndex } from '../substrate/search/elasticsearch-search-index.js';
import { createMongoAuditLog } from '../governance/audit/mongo-audit-log.js';
import { loadPolicies, requirePolicy } from '../governance/policy/policy-set.js';
import { createSearchService } from '../retrieval/search-service.js';
import { createWriteGateway } from '../temporal/write-gateway.js';

export interface ServiceOptions {
  /** Extra settings for indices created by this process (tests shorten the soft-delete lease sync). */
  indexSettings?: Record<string, unknown>;
  /** Task queue the API starts workflows on (tests use one of their own). */
  taskQueue?: string;
}

/** Stores, index and domain services over the runtime's clients: the one place they are wired. */
export function createServices(runtime: Runtime, options: ServiceOptions = {}) {
  const { config, db } = runtime;
  const fingerprints = createFingerprinter(config.secrets.fingerprintSecret);
  const events = createMongoEventStore(db);
  const memories = createMongoMemoryStore(db);
  const lineage = createMongoLineageStore(db);
  const tombstones = createMongoTombstoneStore(db, fingerprints);
  const staging = createMongoStagingStore(db);
  const audit = createMongoAuditLog(db);
  const embedder = createHashingEmbedder({ dims: config.elasticsearch.embeddingDims });
  const index = createElasticsearchSearchIndex(runtime.es, {
    prefix: config.elasticsearch.indexPrefix,
    embedder,
    ...(options.indexSettings ? { indexSettings: options.indexSettings } : {}),
  });
  const policies = loadPolicies();
  const temporalClient = new Client({ connection: runtime.temporal, namespace: config.temporal.namespace });
  const taskQueue = options.taskQueue ?? config.temporal.taskQueue;
  return {
    fingerprints,
    events,
    memories,
    lineage,
    tombstones,
    staging,
    audit,
    embedder,
    index,
    policies,
    impactPolicy: requirePolicy(policies, 'memory-impact'),
    temporalClient,
    taskQueue,
    search: createSearchService({ index, memories }),
    writes: createWriteGateway({ staging, client: temporalClient, taskQueue }),
    /** Creates every index the queries need; idempotent, run at start-up. */
    async ensureIndexes() {
      await events.ensureIndexes();
      await memories.ensureIndexes();
      await tombstones.ensureIndexes();
      await audit.ensureIndexes();
    },
  };
}
export type Services = ReturnType<typeof createServices>;
