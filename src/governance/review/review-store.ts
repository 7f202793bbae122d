import type { Db } from 'mongodb';
import { Collections, findOwn, mapBounded } from '../../substrate/mongo/collections.js';
import { findByIds } from '../../substrate/mongo/bounded-scan.js';
import type { ContentCipher } from '../../substrate/crypto/content-cipher.js';

/** The data key a decision's reason is sealed under: one per decision, shredded when the decision is forgotten. */
const reasonKeyOf = (decisionId: string) => `review:${decisionId}`;

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

export function createMongoReviewStore(db: Db, cipher: ContentCipher): ReviewStore {
  const reviews = db.collection<ReviewDecisionRecord>(Collections.reviews);
  return {
    async record(decision) {
      // The reviewer's words may name the subject: they are sealed at rest like the content they judge.
      const [sealed] = await cipher.sealAll([
        { _id: reasonKeyOf(decision._id), tenant: decision.tenant, content: decision.reason },
      ]);
      await reviews.replaceOne({ _id: decision._id }, { ...decision, reason: sealed!.content }, { upsert: true });
    },
    async get(tenant, memoryId) {
      const found = await findOwn(reviews, tenant, memoryId);
      if (!found) return null;
      const reason = await cipher.openOne({ _id: reasonKeyOf(found._id), tenant, content: found.reason });
      // A reason whose key is shredded belongs to an erased record: the decision reads as gone with it.
      return reason ? { ...found, reason: reason.content } : null;
    },
    async forget(tenant, memoryIds) {
      // A decision is keyed by its memory's id: found by id (a bounded pass over the tenant's decisions when the ids
      // are many, never an `$in` the local server scans for); the reasons' keys are shredded before the rows go.
      const found = await findByIds(reviews, tenant, memoryIds, { concurrency: 16 });
      await cipher.shred(
        tenant,
        found.map((r) => reasonKeyOf(r._id)),
      );
      const deleted = await mapBounded(found, 16, (r) => reviews.deleteOne({ _id: r._id, tenant }));
      return deleted.reduce((n, r) => n + r.deletedCount, 0);
    },
  };
}
