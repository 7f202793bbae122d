import type { Runtime } from '../runtime.js';
import type { Services } from '../services.js';
import type { AdmissionDeps } from '../../src/ingestion/admit-batch.js';
import { createConnectivityActivities } from '../../activities/connectivity.activities.js';
import { createIngestionActivities } from '../../activities/ingestion.activities.js';
import { createErasureStorage } from '../../src/substrate/mongo/erasure-storage.js';
import { createErasureActivities } from '../../activities/erasure.activities.js';
import { createRetentionActivities } from '../../activities/retention.activities.js';
import { retentionActivityDeps } from './retention-deps.js';
import { createReviewActivities } from '../../activities/review.activities.js';
import { createDisputeActivities } from '../../activities/dispute.activities.js';
import { createReembedActivities } from '../../activities/reembed.activities.js';
import { createKeyActivities } from '../../activities/keys.activities.js';
import { createAccessActivities } from '../../activities/access.activities.js';
import { createRectificationActivities } from '../../activities/rectification.activities.js';
import { createConsolidationActivities } from '../../activities/consolidation.activities.js';
import { createExtractiveSummariser } from '../../src/substrate/views/extractive-summariser.js';

/** What admission reads and writes, as the ingestion activities get it (a benchmark builds the same). */
export function admissionDepsOf(services: Services): AdmissionDeps {
  return {
    events: services.events,
    memories: services.memories,
    lineage: services.lineage,
    tombstones: services.tombstones,
    fences: services.fences,
    audit: services.audit,
    claims: services.claims,
    metrics: services.metrics,
    tenantMacs: services.tenantMacs,
    rules: services.rules,
    derivation: services.derivation,
    restrictions: services.restrictions,
  };
}

/** What the dispute activities need, as the worker gives it. */
export function disputeDepsOf(
  services: Services,
  smtp: Pick<Runtime['config']['smtp'], 'reviewersEmail' | 'escalationEmail'>,
): Parameters<typeof createDisputeActivities>[0] {
  return {
    memories: services.memories,
    claims: services.claims,
    events: services.events,
    lineage: services.lineage,
    disputes: services.disputes,
    erasureSets: services.erasureSets,
    fences: services.fences,
    index: services.index,
    audit: services.audit,
    notifier: services.notifier,
    reviewSlaPolicy: services.rules.reviewSla,
    reviewTimeoutPolicy: services.rules.reviewTimeout,
    reviewersEmail: smtp.reviewersEmail,
    escalationEmail: smtp.escalationEmail,
  };
}

/** Every activity the worker registers, built from the runtime's clients (the composition root). */
export function createAllActivities(runtime: Runtime, services: Services) {
  return {
    ...createConnectivityActivities({ probes: runtime.probes }),
    ...createKeyActivities({ vault: runtime.cipher.vault, requests: services.erasureRequests, audit: services.audit }),
    ...createReembedActivities({
      memories: services.memories,
      index: services.index,
      reembedder: services.reembedder,
      audit: services.audit,
    }),
    ...createIngestionActivities({ ...admissionDepsOf(services), staging: services.staging, search: services.index }),
    ...createConsolidationActivities({
      memories: services.memories,
      staging: services.staging,
      tombstones: services.tombstones,
      tenantMacs: services.tenantMacs,
      summariser: createExtractiveSummariser(),
      restrictions: services.restrictions,
    }),
    ...createReviewActivities({
      memories: services.memories,
      index: services.index,
      fences: services.fences,
      audit: services.audit,
      notifier: services.notifier,
      reviewersEmail: runtime.config.smtp.reviewersEmail,
      escalationEmail: runtime.config.smtp.escalationEmail,
    }),
    ...createDisputeActivities(disputeDepsOf(services, runtime.config.smtp)),
    ...createErasureActivities({
      storage: createErasureStorage(
        runtime.db,
        runtime.cipher,
        runtime.snapshots ? { snapshots: runtime.snapshots } : {},
      ),
      cipher: runtime.cipher,
      requests: services.erasureRequests,
      sets: services.erasureSets,
      probes: services.probes,
      events: services.events,
      memories: services.memories,
      lineage: services.lineage,
      tombstones: services.tombstones,
      fences: services.fences,
      sideRecords: services.sideRecords,
      index: services.index,
      search: services.search,
      embedder: services.embedder,
      holds: services.holds,
      audit: services.audit,
      certificates: services.certificates,
      notifier: services.notifier,
      fingerprints: services.fingerprints,
      macs: services.tenantMacs,
      erasurePolicy: services.rules.erasure,
      dpoEmail: runtime.config.smtp.dpoEmail,
      operatorEmail: runtime.config.smtp.operatorEmail,
      metrics: services.metrics,
    }),
    ...createRetentionActivities(retentionActivityDeps(runtime.db, runtime.cipher, services)),
    ...createAccessActivities({
      access: services.access,
      receipts: services.receipts,
      events: services.events,
      memories: services.memories,
      lineage: services.lineage,
      holds: services.holds,
      disputes: services.disputes,
      erasures: services.erasureRequests,
      fingerprints: services.fingerprints,
      macs: services.tenantMacs,
      exposuresOfMany: (tenant, ids) => services.exposures.exposuresOfMany(tenant, ids),
      audit: services.audit,
      signer: services.signer,
      notifier: services.notifier,
      dpoEmail: runtime.config.smtp.dpoEmail,
    }),
    ...createRectificationActivities({
      rectifications: services.rectifications,
      receipts: services.receipts,
      signer: services.signer,
      memories: services.memories,
      claims: services.claims,
      events: services.events,
      lineage: services.lineage,
      index: services.index,
      fences: services.fences,
      erasureRequests: services.erasureRequests,
      audit: services.audit,
      notifier: services.notifier,
      derivedPolicy: services.rules.rectificationDerived,
      fingerprints: services.fingerprints,
      macs: services.tenantMacs,
      reviewersEmail: runtime.config.smtp.reviewersEmail,
      dpoEmail: runtime.config.smtp.dpoEmail,
    }),
  };
}
