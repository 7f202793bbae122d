import type { Db } from 'mongodb';
import { Collections, mapBounded } from '../../substrate/mongo/collections.js';
import { findByIds } from '../../substrate/mongo/bounded-scan.js';

/** A reviewer's decision with its reason in words (kept here, never in workflow histories or the audit chain). */
export interface ReviewDecisionRecord {
  _id: string;
  tenant: string;
  memoryId: string;
  reviewer: string;
  decision: 'approve' | 'reject';
  reason: string;
  decidedAt: Date;
}

export interface ReviewStore {
  record(decision: ReviewDecisionRecord): Promise<void>;
  get(tenant: string, memoryId: string): Promise<ReviewDecisionRecord | null>;
  /** Deletes the decisions (and their reasons) on erased records; returns how many it deleted. */
  forget(tenant: string, memoryIds: readonly string[]): Promise<number>;
}

export function createMongoReviewStore(db: Db): ReviewStore {
  const reviews = db.collection<ReviewDecisionRecord>(Collections.reviews);
  return {
    async record(decision) {
      await reviews.replaceOne({ _id: decision._id }, decision, { upsert: true });
    },
    async get(tenant, memoryId) {
      const found = await reviews.findOne({ _id: memoryId });
      return found && found.tenant === tenant ? found : null;
    },
    async forget(tenant, memoryIds) {
      // A decision is keyed by its memory's id: found by id (a bounded pass over the tenant's decisions when the ids
      // are many, never an `$in` the local server scans for), then deleted by _id.
      const found = await findByIds(reviews, tenant, memoryIds, { concurrency: 16 });
      const deleted = await mapBounded(found, 16, (r) => reviews.deleteOne({ _id: r._id, tenant }));
      return deleted.reduce((n, r) => n + r.deletedCount, 0);
    },
  };
}
