import type { Db } from 'mongodb';
import type { MemoryStatus } from '../../shared/lifecycle.js';
import type { MemoryRecord } from '../../substrate/model/records.js';
import { Collections } from '../../substrate/mongo/collections.js';
import { ERASURE_PENDING } from './expiry-bucket.js';
import { createMongoMemoryStore } from '../../substrate/memories/memory-store.js';

/** A memory record with its place in the retention queue (see `expiry-bucket.ts`). */
type QueuedRecord = MemoryRecord & { expiryBucket?: string | null };

/** What the sweep needs to know of a queued record: never its content. */
export interface QueuedEntry {
  id: string;
  status: MemoryStatus;
  expiresAt: Date | null;
}

/**
 * The retention queue over the memories collection. Every read is one equality query on (tenant, expiryBucket);
 * every slot change is a conditional `updateOne` by `_id` that also checks the record is still in the slot it was read
 * from, and every status change the memory store's guarded compare-and-set, so that concurrent or retried sweeps never
 * move a record twice.
 */
export interface ExpiryQueue {
  ensureIndexes(): Promise<void>;
  /** Up to `limit` records of the tenant in a slot (an hour bucket or `ERASURE_PENDING`), in no particular order. */
  take(tenant: string, slot: string, limit: number): Promise<QueuedEntry[]>;
  /** Compare-and-set `active` → `expired`, moving the record from `slot` to `ERASURE_PENDING`. */
  expire(tenant: string, id: string, slot: string, reason: string): Promise<boolean>;
  /** Moves a record from one slot to another (`null`: out of the queue) if it is still in `from`. */
  move(tenant: string, id: string, from: string, to: string | null): Promise<boolean>;
}

export function createExpiryQueue(db: Db): ExpiryQueue {
  const memories = db.collection<QueuedRecord>(Collections.memories);
  const store = createMongoMemoryStore(db);
  return {
    async ensureIndexes() {
      await memories.createIndex({ tenant: 1, expiryBucket: 1 });
    },
    async take(tenant, slot, limit) {
      const docs = await memories
        .find({ tenant, expiryBucket: slot }, { projection: { _id: 1, status: 1, expiresAt: 1 } })
        .limit(limit)
        .toArray();
      return docs.map((d) => ({ id: d._id, status: d.status, expiresAt: d.expiresAt ?? null }));
    },
    async expire(tenant, id, slot, reason) {
      // The status moves through the memory store's guarded compare-and-set, like every other move: a conditional
      // update alone is not atomic on the local server and could overwrite a concurrent dispute or erasure.
      if (!(await store.transition(tenant, id, 'active', 'expired', reason))) return false;
      // A crash here leaves an expired record in its hour bucket; the next page moves it on as `pending`.
      await memories.updateOne({ _id: id, tenant, expiryBucket: slot }, { $set: { expiryBucket: ERASURE_PENDING } });
      return true;
    },
    async move(tenant, id, from, to) {
      const result = await memories.updateOne({ _id: id, tenant, expiryBucket: from }, { $set: { expiryBucket: to } });
      return result.modifiedCount === 1;
    },
  };
}
