import { Client } from '@temporalio/client';
import { createMongoExposureStore } from '../src/retrieval/exposure-store.js';
import { createRetrievalService } from '../src/retrieval/retrieval-service.js';
import type { Runtime } from './runtime.js';
import { createFingerprinter, createTenantMacs } from '../src/substrate/fingerprint.js';
import { createMongoEventStore } from '../src/substrate/events/event-store.js';
import { createMongoMemoryStore } from '../src/substrate/memories/memory-store.js';
import { createMongoLineageStore } from '../src/substrate/lineage/lineage-store.js';
import { createMongoTombstoneStore } from '../src/substrate/tombstones/tombstone-store.js';
import { createMongoStagingStore } from '../src/substrate/staging/staging-store.js';
import { createEmbedder } from '../src/substrate/search/embedder-factory.js';
import { createElasticsearchSearchIndex } from '../src/substrate/search/elasticsearch-search-index.js';
import { createMongoAuditLog } from '../src/governance/audit/mongo-audit-log.js';
import { loadPolicies, requirePolicy } from '../src/governance/policy/policy-set.js';
import { createSearchService } from '../src/retrieval/search-service.js';
import { createReadTrace } from '../src/retrieval/read-trace.js';
import { createWriteGateway } from '../src/temporal/write-gateway.js';
import { createConsolidationGateway } from '../src/temporal/consolidation-gateway.js';
import { createRetentionScheduler } from '../src/temporal/retention-schedule.js';
import { createMongoSweepStateStore } from '../src/governance/retention/sweep-state-store.js';
import { createErasureGateway } from '../src/temporal/erasure-gateway.js';
import { createAccessGateway } from '../src/temporal/access-gateway.js';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { createMongoAccessStore } from '../src/governance/rights/access-store.js';
import { createMongoRectificationStore } from '../src/governance/rights/rectification-store.js';
import { createMongoReceiptStore } from '../src/governance/rights/receipt-store.js';
import { createRectificationGateway } from '../src/temporal/rectification-gateway.js';
import { createReembedGateway } from '../src/temporal/reembed-gateway.js';
import { createDecisionGateway } from '../src/temporal/decision-gateway.js';
import { createElasticsearchReembedder } from '../src/substrate/search/elasticsearch-reembedder.js';
import { createMongoErasureRequestStore } from '../src/governance/erasure/erasure-request-store.js';
import { createMongoErasureSetStore } from '../src/governance/erasure/erasure-set-store.js';
import { createMongoErasureFenceStore } from '../src/governance/erasure/erasure-fence-store.js';
import { createMongoProbeStore } from '../src/governance/erasure/probe-store.js';
import { createSideRecordEraser } from '../src/governance/erasure/side-records.js';
import { createMongoTenantUsageStore } from '../src/governance/quotas/tenant-usage-store.js';
import { createWriteQuota } from '../src/ingestion/write-quota.js';
import { createMongoHoldStore } from '../src/governance/holds/hold-store.js';
import { createMongoRestrictionStore } from '../src/governance/rights/restriction-store.js';
import { createMongoLogTree } from '../src/governance/audit/log-tree/log-tree-store.js';
import { createCheckpointStore } from '../src/governance/audit/log-tree/checkpoint-store.js';
import { createLogAnchors } from '../src/governance/audit/log-tree/log-anchors.js';
import { createLogTiles } from '../src/governance/audit/log-tree/log-tiles.js';
import { createWitnessRound } from '../src/governance/audit/witness/witness-round.js';
import { createCheckpointCosigner } from '../src/governance/audit/witness/checkpoint-cosigner.js';
import { createHttpWitness } from '../src/governance/audit/witness/http-witness.js';
import { createWitnessctlEnrolment } from '../src/governance/audit/witness/witnessctl-enrolment.js';
import { createMongoCertificateStore } from '../src/governance/certificates/certificate-store.js';
import { loadPublicSigningKey, loadSigningKey } from '../src/governance/certificates/signing.js';
import { createMailNotifier } from '../src/governance/notifications/notifier.js';
import { createMongoReviewStore } from '../src/governance/review/review-store.js';
import { createMongoDisputeStore } from '../src/governance/disputes/dispute-store.js';
import { createClaimLookup } from '../src/substrate/memories/claim-lookup.js';
import { createThreadedVerifier } from '../src/governance/derivation/threaded-verifier.js';
import { createOpenAiCompatibleVerifier } from '../src/governance/derivation/openai-compatible-verifier.js';
import { createMongoRevokedTokenStore } from '../src/governance/auth/revoked-token-store.js';
import { createPrometheusMetrics } from '../src/observability/prometheus-metrics.js';

export interface ServiceOptions {
  /** Extra settings for indices created by this process (tests shorten the soft-delete lease sync). */
  indexSettings?: Record<string, unknown>;
  /** Task queue the API starts workflows on (tests use one of their own). */
  taskQueue?: string;
  /**
   * The certificate key this process holds: `private` where certificates are issued (the worker, tests and the
   * demo in one process), `public` where the key is only served (the API).
   */
  certificateKey?: 'private' | 'public';
  /**
   * What this process's metrics serve besides its own series: the open erasure requests (read from MongoDB at each
   * scrape; the API serves them, so that they are not counted twice) and the Node.js process's series.
   */
  metrics?: { erasureBacklog?: boolean; processMetrics?: boolean };
}

/** Stores, index and domain services over the runtime's clients: the one place they are wired. */
export function createServices(runtime: Runtime, options: ServiceOptions = {}) {
  const { config, db } = runtime;
  const fingerprints = createFingerprinter(config.secrets.fingerprintKeys);
  const tenantMacs = createTenantMacs(config.secrets.fingerprintKeys);
  const events = createMongoEventStore(db, tenantMacs, runtime.cipher);
  const memories = createMongoMemoryStore(db, runtime.cipher);
  const lineage = createMongoLineageStore(db);
  const tombstones = createMongoTombstoneStore(db, fingerprints);
  const staging = createMongoStagingStore(db, tenantMacs, runtime.cipher);
  const erasureRequests = createMongoErasureRequestStore(db);
  // One registry per services instance: a process has one, and tests that build several apps never collide.
  const metrics = createPrometheusMetrics({
    ...(options.metrics?.erasureBacklog ? { erasureBacklog: () => erasureRequests.backlog() } : {}),
    processMetrics: options.metrics?.processMetrics ?? false,
  });
  const audit = createMongoAuditLog(db, { onAppended: metrics.auditAppended });
  const embedder = createEmbedder(config.embedder);
  const index = createElasticsearchSearchIndex(runtime.es, {
    prefix: config.elasticsearch.indexPrefix,
    embedder,
    ...(options.indexSettings ? { indexSettings: options.indexSettings } : {}),
  });
  const policies = loadPolicies();
  const temporalClient = new Client({
    connection: runtime.temporal,
    namespace: config.temporal.namespace,
    // The API request's span is the parent of the workflow it starts, signals or updates.
    ...(runtime.tracing.enabled
      ? { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer: runtime.tracing.tracer })] } }
      : {}),
  });
  const taskQueue = options.taskQueue ?? config.temporal.taskQueue;
  const signer =
    options.certificateKey === 'public'
      ? loadPublicSigningKey(config.secrets.signingPublicKeyFile)
      : loadSigningKey(config.secrets.signingKeyFile);
  const logTree = createMongoLogTree(db);
  const checkpoints = createCheckpointStore(db, { audit, tree: logTree, signer, origin: config.log.origin });
  // Each certificate (and receipt) is anchored under a checkpoint signed as it is issued, in the worker.
  const logAnchors = createLogAnchors({ audit, checkpoints, tree: logTree });
  const logTiles = createLogTiles({ tree: logTree, audit });
  const certificates = createMongoCertificateStore(db, { signer, audit, logAnchors });
  // The witnesses each checkpoint the worker signs is submitted to; a local one may be told about new logs.
  const witnesses = createWitnessRound({
    cosigners: config.log.witnesses.map((w) =>
      createCheckpointCosigner({
        witness: createHttpWitness(w),
        ...(w.enrol ? { enrolment: createWitnessctlEnrolment(w.enrol) } : {}),
      }),
    ),
    checkpoints,
    tree: logTree,
    log: runtime.log,
  });
  const holds = createMongoHoldStore(db, fingerprints);
  const restrictions = createMongoRestrictionStore(db, fingerprints);
  const disputes = createMongoDisputeStore(db, runtime.cipher);
  const reviews = createMongoReviewStore(db, runtime.cipher);
  const claims = createClaimLookup(db);
  const fences = createMongoErasureFenceStore(db, fingerprints);
  const exposures = createMongoExposureStore(db, fingerprints);
  const usage = createMongoTenantUsageStore(db);
  const access = createMongoAccessStore(db, runtime.cipher, fingerprints);
  const rectifications = createMongoRectificationStore(db, runtime.cipher);
  const receipts = createMongoReceiptStore(db, { logAnchors });
  const revokedTokens = createMongoRevokedTokenStore(db);
  const trace = createReadTrace({ exposures, macs: tenantMacs });
  const search = createSearchService({ index, memories, disputes, trace });
  const retrieval = createRetrievalService({ index, memories, disputes, trace });
  // The hourly retention sweep of each tenant, created when the tenant first writes.
  const retentionScheduler = createRetentionScheduler({
    client: temporalClient,
    taskQueue,
    sweeps: createMongoSweepStateStore(db),
  });
  const verifierConfig = config.derivation.verifier;
  const derivation = {
    mode: config.derivation.mode,
    timeoutMs: config.derivation.timeoutMs,
    // The deterministic verifier runs on threads of its own under a CPU deadline: no evidence holds this event loop.
    verifier:
      verifierConfig.kind === 'openai-compatible'
        ? createOpenAiCompatibleVerifier(verifierConfig)
        : createThreadedVerifier(verifierConfig),
    policy: requirePolicy(policies, 'derivation-admission'),
    maxAuditBytes: config.derivation.maxAuditBytes,
    maxBatchBytes: config.derivation.maxBatchBytes,
  };
  return {
    /** The operator's series (`/metrics`): the one registry of this process. */
    metrics,
    fingerprints,
    /** Keyed hashes under each tenant's own key: event and request ids, retrieval query hashes. */
    tenantMacs,
    events,
    /** The write-time derivation audit: its mode, verifier and policy. */
    derivation,
    memories,
    lineage,
    tombstones,
    staging,
    audit,
    embedder,
    index,
    policies,
    /** The named policies each rule is judged by (json-logic, loaded once from policies/). */
    rules: {
      impact: requirePolicy(policies, 'memory-impact'),
      write: requirePolicy(policies, 'memory-write'),
      read: requirePolicy(policies, 'memory-read'),
      scope: requirePolicy(policies, 'memory-scope'),
      retention: requirePolicy(policies, 'retention'),
      reviewSla: requirePolicy(policies, 'review-sla'),
      reviewTimeout: requirePolicy(policies, 'review-timeout'),
      restriction: requirePolicy(policies, 'subject-restrictions'),
      access: requirePolicy(policies, 'subject-access'),
      rectification: requirePolicy(policies, 'subject-rectification'),
      rectificationDerived: requirePolicy(policies, 'rectification-derived'),
      erasure: requirePolicy(policies, 'erasure-authorisation'),
      hold: requirePolicy(policies, 'legal-holds'),
    },
    /** The Temporal gateways: each starts its request kind's workflow and sends it the people's decisions. */
    workflows: {
      writes: createWriteGateway({
        staging,
        macs: tenantMacs,
        client: temporalClient,
        taskQueue,
        onTenantWrite: (tenant) => retentionScheduler.ensure(tenant),
      }),
      consolidations: createConsolidationGateway({
        client: temporalClient,
        taskQueue,
        pauseMs: config.consolidation.pauseMs,
        waitMs: config.consolidation.waitMs,
      }),
      access: createAccessGateway({
        access,
        audit,
        client: temporalClient,
        taskQueue,
        fingerprints,
        macs: tenantMacs,
        deliveryWindowMs: config.access.deliveryWindowMs,
      }),
      rectification: createRectificationGateway({
        rectifications,
        memories,
        claims,
        tombstones,
        lineage,
        audit,
        client: temporalClient,
        taskQueue,
        macs: tenantMacs,
        reviewSlaPolicy: requirePolicy(policies, 'review-sla'),
      }),
      reembeds: createReembedGateway({ client: temporalClient, taskQueue }),
      decisions: createDecisionGateway(temporalClient),
      erasure: createErasureGateway({
        requests: erasureRequests,
        client: temporalClient,
        taskQueue,
        fingerprints,
        macs: tenantMacs,
      }),
    },
    temporalClient,
    taskQueue,
    search,
    retrieval,
    exposures,
    /** Every content read, recorded for exposure tracing. */
    trace,
    retentionScheduler,
    signer,
    publicKeyPem: signer.publicKeyPem,
    certificates,
    /** Each tenant's audit log as a Merkle tree, and its signed checkpoints (published by the worker). */
    logTree,
    /** The same log as C2SP tlog-tiles, for tlog clients and mirrors. */
    logTiles,
    checkpoints,
    /** Submits newly signed checkpoints to the configured witnesses and keeps their cosignatures. */
    witnesses,
    /** The configured witnesses' names and cosignature verifier keys, which auditors check cosignatures with. */
    witnessKeys: config.log.witnesses.map((w) => ({ name: w.name, key: w.key })),
    erasureRequests,
    erasureSets: createMongoErasureSetStore(db),
    fences,
    /** Revoked bearer tokens, checked on every authenticated request. */
    revokedTokens,
    probes: createMongoProbeStore(db, runtime.cipher),
    holds,
    /** Restrictions of processing and objections: every read request loads the tenant's active set once. */
    restrictions,
    notifier: createMailNotifier(runtime.mail, config.smtp.from),
    reviews,
    disputes,
    claims,
    /** Erases what staging, sign-off and dispute collections keep about erased records. */
    sideRecords: createSideRecordEraser({
      staging,
      reviews,
      disputes,
      exposures,
      usage,
      accessPackages: access,
      rectifications,
    }),
    /** Access and portability requests and their packages. */
    access,
    /** Rectification requests (Art. 16): filed by the DPO, decided by a reviewer through their workflow. */
    rectifications,
    /** Signed receipts of closed subject-rights requests, anchored in the audit chain. */
    receipts,
    /** Per-tenant quotas on writes and stored bytes, counted in MongoDB across API processes. */
    usage,
    writeQuota: createWriteQuota(usage, config.limits.quota, metrics),
    reembedder: createElasticsearchReembedder(runtime.es, {
      prefix: config.elasticsearch.indexPrefix,
      embedder,
      ...(options.indexSettings ? { indexSettings: options.indexSettings } : {}),
    }),
    /** Creates every index the queries need; idempotent, run at start-up. */
    /** Seals content at rest under per-record data keys, and shreds those keys on erasure. */
    cipher: runtime.cipher,
    async ensureIndexes() {
      await runtime.cipher.vault.ensureIndexes();
      await events.ensureIndexes();
      await staging.ensureIndexes();
      await memories.ensureIndexes();
      await tombstones.ensureIndexes();
      await audit.ensureIndexes();
      await certificates.ensureIndexes();
      await erasureRequests.ensureIndexes();
      await holds.ensureIndexes();
      await restrictions.ensureIndexes();
      await access.ensureIndexes();
      await rectifications.ensureIndexes();
      await disputes.ensureIndexes();
      await claims.ensureIndexes();
      await fences.ensureIndexes();
      await exposures.ensureIndexes();
      await usage.ensureIndexes();
      await revokedTokens.ensureIndexes();
    },
  };
}
export type Services = ReturnType<typeof createServices>;
