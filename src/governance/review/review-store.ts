import type { Db } from 'mongodb';

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
}

export function createMongoReviewStore(db: Db): ReviewStore {
  const reviews = db.collection<ReviewDecisionRecord>('review_decisions');
  return {
    async record(decision) {
      await reviews.replaceOne({ _id: decision._id }, decision, { upsert: true });
    },
    async get(tenant, memoryId) {
      const found = await reviews.findOne({ _id: memoryId });
      return found && found.tenant === tenant ? found : null;
    },
  };
}
