import type { Db } from 'mongodb';
import { sha256Hex } from '../../shared/sha256.js';
import { Collections, findOwn, insertOnce, mapBounded, replaceOwn } from '../../substrate/mongo/collections.js';
import { findMatching } from '../../substrate/mongo/bounded-scan.js';
import type { Adjudication } from './contradiction.js';
import { keysetPage, type Page, type PageKey } from '../../substrate/mongo/keyset-page.js';
import type { ContentCipher } from '../../substrate/crypto/content-cipher.js';

/** Two memories that disagree, linked until a reviewer adjudicates. Ids and hashes only. */
export interface DisputeRecord {
  _id: string;
  tenant: string;
  /** The two records, sorted. */
  memoryIds: string[];
  namespace: string;
  attribute: string;
  /** Whoever wrote either record: none of them may adjudicate. */
  writers: string[];
  /** `void`: a record of it was erased before anyone adjudicated. */
  state: 'open' | 'resolved' | 'void';
  openedAt: Date;
  resolution: DisputeResolution | null;
}

export interface DisputeResolution {
  outcome: Adjudication;
  /** The record kept (keep-one) or rejected (reject-one). */
  memoryId: string | null;
  reviewer: string;
  reasonHash: string;
  /** The event that records the decision and its reason. */
  eventId: string;
  at: Date;
}

/** A reviewer's reason in words, kept beside the dispute until the resolution event carries it. */
interface DisputeReason {
  _id: string;
  tenant: string;
  disputeId: string;
  text: string;
}

/** The data key a reason is sealed under: one per kept reason, shredded when the reason is forgotten. */
const reasonKeyOf = (reasonId: string) => `reason:${reasonId}`;

export function disputeIdOf(tenant: string, memoryIds: readonly string[]): string {
  return `dsp_${sha256Hex(JSON.stringify([tenant, [...memoryIds].sort()])).slice(0, 32)}`;
}

export interface DisputeStore {
  ensureIndexes(): Promise<void>;
  /** Idempotent: opening the same pair again returns the existing dispute. */
  open(dispute: Omit<DisputeRecord, '_id' | 'state' | 'resolution'>): Promise<DisputeRecord>;
  get(tenant: string, id: string): Promise<DisputeRecord | null>;
  /** Open disputes a record is part of. */
  openFor(tenant: string, memoryId: string): Promise<DisputeRecord[]>;
  /** Open disputes of any of these records, by record id (bounded parallel equality lookups). */
  openForMany(tenant: string, memoryIds: readonly string[]): Promise<Map<string, DisputeRecord[]>>;
  /** Every dispute (open, resolved or void) over any of these records. */
  allFor(tenant: string, memoryIds: readonly string[]): Promise<DisputeRecord[]>;
  listOpen(tenant: string, limit: number): Promise<DisputeRecord[]>;
  /** Open disputes, oldest first, a page at a time. */
  pageOpen(tenant: string, limit: number, after: PageKey | null): Promise<Page<DisputeRecord>>;
  resolve(tenant: string, id: string, resolution: DisputeResolution): Promise<void>;
  /** Closes a dispute without a decision because a record of it was erased. */
  voidDispute(tenant: string, id: string, requestId: string): Promise<void>;
  keepReason(tenant: string, disputeId: string, reasonHash: string, text: string): Promise<void>;
  reason(tenant: string, disputeId: string, reasonHash: string): Promise<string | null>;
  /** Drops a reason once its resolution event holds it (erasure then finds it there, by subject). */
  forgetReason(tenant: string, disputeId: string, reasonHash: string): Promise<void>;
  /**
   * Deletes every reason kept for any dispute (in any state) over one of these records — e.g. one left behind by
   * a resolution that failed after the reviewer gave it; returns how many it deleted.
   */
  forgetReasonsOf(tenant: string, memoryIds: readonly string[]): Promise<number>;
}

export function createMongoDisputeStore(db: Db, cipher: ContentCipher): DisputeStore {
  const disputes = db.collection<DisputeRecord>(Collections.disputes);
  const reasons = db.collection<DisputeReason>(Collections.disputeReasons);
  const openFor = async (tenant: string, memoryId: string) =>
    disputes.find({ tenant, memoryIds: memoryId, state: 'open' }).toArray();
  return {
    async ensureIndexes() {
      await disputes.createIndex({ tenant: 1, memoryIds: 1 });
      await disputes.createIndex({ tenant: 1, state: 1 });
      await reasons.createIndex({ tenant: 1, disputeId: 1 });
    },
    async open(input) {
      const memoryIds = [...input.memoryIds].sort();
      const dispute: DisputeRecord = {
        ...input,
        _id: disputeIdOf(input.tenant, memoryIds),
        memoryIds,
        state: 'open',
        resolution: null,
      };
      return (await insertOnce(disputes, dispute)).doc;
    },
    get: (tenant, id) => findOwn(disputes, tenant, id),
    openFor,
    async openForMany(tenant, memoryIds) {
      const ids = [...new Set(memoryIds)];
      const found = await mapBounded(ids, 16, (id) => openFor(tenant, id));
      return new Map(ids.map((id, i) => [id, found[i]!]));
    },
    allFor: (tenant, memoryIds) => findMatching(disputes, tenant, 'memoryIds', memoryIds),
    async listOpen(tenant, limit) {
      return disputes.find({ tenant, state: 'open' }).sort({ openedAt: 1 }).limit(limit).toArray();
    },
    pageOpen(tenant, limit, after) {
      return keysetPage(disputes, { tenant, state: 'open' }, 'openedAt', 1, limit, after);
    },
    async resolve(tenant, id, resolution) {
      // Written once by the dispute's own workflow, so no concurrent writer contends for it.
      await disputes.updateOne({ _id: id, tenant }, { $set: { state: 'resolved', resolution } });
    },
    async voidDispute(tenant, id, requestId) {
      await disputes.updateOne({ _id: id, tenant, state: 'open' }, { $set: { state: 'void', voidedBy: requestId } });
    },
    async keepReason(tenant, disputeId, reasonHash, text) {
      // The reviewer's words may name the subject: sealed at rest under a key of the reason's own.
      const _id = `${disputeId}:${reasonHash}`;
      const [sealed] = await cipher.sealAll([{ _id: reasonKeyOf(_id), tenant, content: text }]);
      await replaceOwn(reasons, _id, { tenant, disputeId, text: sealed!.content });
    },
    async reason(tenant, disputeId, reasonHash) {
      const found = await findOwn(reasons, tenant, `${disputeId}:${reasonHash}`);
      if (!found) return null;
      const opened = await cipher.openOne({ _id: reasonKeyOf(found._id), tenant, content: found.text });
      return opened?.content ?? null;
    },
    async forgetReason(tenant, disputeId, reasonHash) {
      const _id = `${disputeId}:${reasonHash}`;
      await cipher.shred(tenant, [reasonKeyOf(_id)]);
      await reasons.deleteOne({ _id, tenant });
    },
    async forgetReasonsOf(tenant, memoryIds) {
      const found = await findMatching(disputes, tenant, 'memoryIds', memoryIds, {
        projection: { _id: 1, memoryIds: 1 },
      });
      const disputeIds = [...new Set(found.map((d) => d._id))];
      const deleted = await mapBounded(disputeIds, 16, async (disputeId) => {
        // Keys first: a reason row left by a failure between the two reads as erased, and the retry deletes it.
        const kept = await reasons.find({ tenant, disputeId }, { projection: { _id: 1 } }).toArray();
        await cipher.shred(
          tenant,
          kept.map((r) => reasonKeyOf(r._id)),
        );
        return reasons.deleteMany({ tenant, disputeId });
      });
      return deleted.reduce((n, r) => n + r.deletedCount, 0);
    },
  };
}
