import type { Db } from 'mongodb';
import type { MemoryStatus } from '../../shared/lifecycle.js';
import type { MemoryRecord } from '../../substrate/model/records.js';
import { Collections, mapBounded } from '../../substrate/mongo/collections.js';
import { ERASURE_PENDING } from './expiry-bucket.js';
import type { ContentCipher } from '../../substrate/crypto/content-cipher.js';
import { createMongoMemoryStore } from '../../substrate/memories/memory-store.js';

/** A memory record with its place in the retention queue (see `expiry-bucket.ts`). */
type QueuedRecord = MemoryRecord & { expiryBucket?: string | null };

/** What the sweep needs to know of a queued record: never its content. */
export interface QueuedEntry {
  id: string;
  status: MemoryStatus;
  expiresAt: Date | null;
  /** The version read (a status move claims the move from it). */
  version: number;
}

/**
 * The retention queue over the memories collection. Every read is one equality query on (tenant, expiryBucket);
 * every slot change is a conditional `updateOne` by `_id` that also checks the record is still in the slot it was read
 * from, and every status change the memory store's guarded compare-and-set, so that concurrent or retried sweeps never
 * move a record twice. A slot change rewrites the whole row on the local server, so it is followed by the store's
 * `settle`, which makes again any status move it undid.
 */
export interface ExpiryQueue {
  ensureIndexes(): Promise<void>;
  /** Up to `limit` records of the tenant in a slot (an hour bucket or `ERASURE_PENDING`), in no particular order. */
  take(tenant: string, slot: string, limit: number): Promise<QueuedEntry[]>;
  /** Compare-and-set `active` → `expired`, moving the record from `slot` to `ERASURE_PENDING`. */
  expire(tenant: string, id: string, slot: string, reason: string): Promise<boolean>;
  /**
   * `expire` for a page of `active` entries at once, from the versions they were read at: the guards claimed in one
   * insert, then one conditional update per record that moves the status and the slot together. Returns the ids
   * moved and those to try again one by one (changed since they were read, or another mover owns the version).
   */
  expireMany(
    tenant: string,
    entries: readonly QueuedEntry[],
    slot: string,
    reason: string,
  ): Promise<{ expired: string[]; retry: string[] }>;
  /** Moves a record from one slot to another (`null`: out of the queue) if it is still in `from`. */
  move(tenant: string, id: string, from: string, to: string | null): Promise<boolean>;
}

export function createExpiryQueue(db: Db, cipher: ContentCipher): ExpiryQueue {
  const memories = db.collection<QueuedRecord>(Collections.memories);
  const store = createMongoMemoryStore(db, cipher);
  return {
    async ensureIndexes() {
      await memories.createIndex({ tenant: 1, expiryBucket: 1 });
    },
    async take(tenant, slot, limit) {
      const docs = await memories
        .find({ tenant, expiryBucket: slot }, { projection: { _id: 1, status: 1, expiresAt: 1, version: 1 } })
        .limit(limit)
        .toArray();
      return docs.map((d) => ({ id: d._id, status: d.status, expiresAt: d.expiresAt ?? null, version: d.version }));
    },
    async expire(tenant, id, slot, reason) {
      // The status moves through the memory store's guarded compare-and-set, like every other move: a conditional
      // update alone is not atomic on the local server and could overwrite a concurrent dispute or erasure.
      if (!(await store.transition(tenant, id, 'active', 'expired', reason))) return false;
      // A crash here leaves an expired record in its hour bucket; the next page moves it on as `pending`.
      await memories.updateOne({ _id: id, tenant, expiryBucket: slot }, { $set: { expiryBucket: ERASURE_PENDING } });
      await store.settle(tenant, [id]);
      return true;
    },
    async expireMany(tenant, entries, slot, reason) {
      const active = entries.filter((e) => e.status === 'active');
      const { moved, retry, unpatched } = await store.transitionMany(
        tenant,
        active.map((e) => ({ _id: e.id, tenant, version: e.version, status: e.status })),
        'expired',
        reason,
        { expiryBucket: ERASURE_PENDING },
      );
      // A move finished forward from an earlier attempt's guard did not carry the slot: move it on as `expire` does.
      await mapBounded(unpatched, 16, (id) =>
        memories.updateOne({ _id: id, tenant, expiryBucket: slot }, { $set: { expiryBucket: ERASURE_PENDING } }),
      );
      await store.settle(tenant, unpatched);
      return { expired: moved, retry };
    },
    async move(tenant, id, from, to) {
      const result = await memories.updateOne({ _id: id, tenant, expiryBucket: from }, { $set: { expiryBucket: to } });
      if (result.matchedCount === 1) await store.settle(tenant, [id]);
      return result.modifiedCount === 1;
    },
  };
}
