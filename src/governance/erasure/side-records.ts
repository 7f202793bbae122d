import { Collections } from '../../substrate/mongo/collections.js';
import type { StagingStore } from '../../substrate/staging/staging-store.js';
import type { DisputeStore } from '../disputes/dispute-store.js';
import type { ReviewStore } from '../review/review-store.js';
import type { TenantUsageStore } from '../quotas/tenant-usage-store.js';

/** What an erasure removed: its records' ids (memories and events), their subjects and content hashes. */
export interface SideRecordTarget {
  ids: string[];
  subjects: string[];
  /** Keyed hashes of the erased content (`content-hash.ts`). */
  contentHashes: string[];
}

/** Removed documents per collection: counts only, never what they held. */
export type SideRecordCounts = Record<string, number>;

export interface SideRecordEraser {
  /** Idempotent: a retry finds nothing left and counts zero. */
  erase(tenant: string, target: SideRecordTarget): Promise<SideRecordCounts>;
  /** Whether the erased memories had reached agents (for the certificate): counts and times. */
  exposureOf(tenant: string, memoryIds: readonly string[]): Promise<ExposureSummary>;
}

const isEvent = (id: string) => id.startsWith('evt_');

/** Retrieval's exposure trace, as erasure needs it: the erased records' ids reduced to keyed hashes. */
export interface ExposureTrace {
  forget(tenant: string, memoryIds: readonly string[]): Promise<number>;
  summarise(tenant: string, memoryIds: readonly string[]): Promise<ExposureSummary>;
}

/** Counts and times of what reached agents. */
export interface ExposureSummary {
  retrievals: number;
  /** Retrievals by the route that served them (`retrieve`, `search`, `memory`, `event`). */
  byRoute: Record<string, number>;
  firstRetrievedAt: Date | null;
  lastRetrievedAt: Date | null;
  prompts: number;
  firstExposedAt: Date | null;
  lastExposedAt: Date | null;
}

/**
 * Erases what the side collections keep about erased records, outside the event log, the memories and
 * lineage: staged write batches that mention them (left by an ingestion that never finished), reviewers'
 * sign-off reasons, dispute reasons still waiting for a resolution event, and the exposure trace (reduced to
 * keyed hashes: that a record was retrieved and reached a prompt stays countable, but not by its id). The erased
 * records' stored bytes are given back to the tenant's quota.
 */
export function createSideRecordEraser(deps: {
  staging: StagingStore;
  reviews: ReviewStore;
  disputes: DisputeStore;
  exposures: ExposureTrace;
  usage?: Pick<TenantUsageStore, 'release'>;
  /** Access packages hold copies of the records they answer for: an erasure of any of them erases the package. */
  accessPackages?: { erasePackagesHolding(tenant: string, recordIds: readonly string[]): Promise<number> };
  /** Open corrections of an erased record: void, their corrected content (about the same subject) shredded. */
  rectifications?: { voidHolding(tenant: string, memoryIds: readonly string[]): Promise<string[]> };
}): SideRecordEraser {
  return {
    async erase(tenant, target) {
      // Sign-offs and disputes are about memories: event ids would only cost lookups that find nothing.
      const memoryIds = [...new Set(target.ids.filter((id) => !isEvent(id)))];
      const [staged, reviews, reasons, exposures, stored, packages, corrections] = await Promise.all([
        deps.staging.eraseMentioning(tenant, target),
        deps.reviews.forget(tenant, memoryIds),
        deps.disputes.forgetReasonsOf(tenant, memoryIds),
        // Events are read by id like memories, and traced like them (governance/read): their ids are reduced too.
        deps.exposures.forget(tenant, [...new Set(target.ids)]),
        deps.usage?.release(tenant, target.ids) ?? 0,
        deps.accessPackages?.erasePackagesHolding(tenant, target.ids) ?? 0,
        deps.rectifications?.voidHolding(tenant, memoryIds) ?? [],
      ]);
      return {
        [Collections.staging]: staged,
        [Collections.reviews]: reviews,
        [Collections.disputeReasons]: reasons,
        [Collections.exposures]: exposures,
        ...(deps.usage ? { [Collections.storedRecords]: stored } : {}),
        ...(deps.accessPackages ? { [Collections.accessPackages]: packages } : {}),
        ...(deps.rectifications ? { [Collections.rectifications]: corrections.length } : {}),
      };
    },
    exposureOf(tenant, ids) {
      return deps.exposures.summarise(tenant, ids);
    },
  };
}
