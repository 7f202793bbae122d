import type { Db } from 'mongodb';
import type { MemoryStatus } from '../../shared/lifecycle.js';
import type { MemoryRecord } from '../model/records.js';
import { Collections, isDuplicateKey, mapBounded } from '../mongo/collections.js';

/** Memory records with their governance fields. Status changes are compare-and-set, for workflows only. */
export interface MemoryStore {
  ensureIndexes(): Promise<void>;
  /** Idempotent by id: a retried insert of the same record reports `exists`. */
  insert(record: MemoryRecord): Promise<'created' | 'exists'>;
  get(tenant: string, id: string): Promise<MemoryRecord | null>;
  /** Records by id within the tenant (bounded parallel `_id` lookups); missing and foreign ids are absent. */
  getMany(tenant: string, ids: readonly string[]): Promise<MemoryRecord[]>;
  /** Compare-and-set: moves the record only if it is still in `from`. Returns whether it moved. */
  transition(
    tenant: string,
    id: string,
    from: MemoryStatus,
    to: MemoryStatus,
    reason: string | null,
    patch?: Partial<Pick<MemoryRecord, 'validTo'>>,
  ): Promise<boolean>;
  idsBySubject(tenant: string, subject: string): Promise<string[]>;
  idsByContentHash(tenant: string, contentHash: string): Promise<string[]>;
  /** Records whose valid time or transaction time starts within [from, to). */
  idsByTime(tenant: string, field: 'validFrom' | 'recordedAt', from: Date, to: Date): Promise<string[]>;
  /** Marks records deleted (from any live status) so that nothing serves them while they are purged. */
  markDeleted(tenant: string, ids: readonly string[], requestId: string): Promise<number>;
  /** Records held by a legal hold: readable only by the legal role until the hold is released. */
  restrict(tenant: string, ids: readonly string[], holdId: string): Promise<void>;
  /** Physically deletes records by id (bounded parallel `_id` deletes). */
  purge(tenant: string, ids: readonly string[]): Promise<number>;
}

export function createMongoMemoryStore(db: Db): MemoryStore {
  const memories = db.collection<MemoryRecord>(Collections.memories);
  const getMany = async (tenant: string, ids: readonly string[]) => {
    const found = await mapBounded([...new Set(ids)], 32, (id) => memories.findOne({ _id: id }));
    return found.filter((r): r is MemoryRecord => r !== null && r.tenant === tenant);
  };
  return {
    async ensureIndexes() {
      await memories.createIndex({ tenant: 1, subjects: 1 });
      await memories.createIndex({ tenant: 1, status: 1 });
      await memories.createIndex({ tenant: 1, expiresAt: 1 });
      await memories.createIndex({ tenant: 1, contentHash: 1 });
    },
    async insert(record) {
      try {
        await memories.insertOne(record);
        return 'created';
      } catch (error) {
        if (isDuplicateKey(error)) return 'exists';
        throw error;
      }
    },
    async get(tenant, id) {
      const record = await memories.findOne({ _id: id });
      return record && record.tenant === tenant ? record : null;
    },
    getMany,
    async transition(tenant, id, from, to, reason, patch = {}) {
      const result = await memories.updateOne(
        { _id: id, tenant, status: from },
        { $set: { status: to, statusReason: reason, updatedAt: new Date(), ...patch }, $inc: { version: 1 } },
      );
      return result.modifiedCount === 1;
    },
    async idsBySubject(tenant, subject) {
      const docs = await memories.find({ tenant, subjects: subject }, { projection: { _id: 1 } }).toArray();
      return docs.map((d) => d._id);
    },
    async idsByContentHash(tenant, contentHash) {
      const docs = await memories.find({ tenant, contentHash }, { projection: { _id: 1 } }).toArray();
      return docs.map((d) => d._id);
    },
    async idsByTime(tenant, field, from, to) {
      // A range is not pushed down on the local server (a scan per tenant); selectors by time are rare.
      const docs = await memories.find({ tenant, [field]: { $gte: from, $lt: to } }, { projection: { _id: 1 } }).toArray();
      return docs.map((d) => d._id);
    },
    async markDeleted(tenant, ids, requestId) {
      const records = await getMany(tenant, ids);
      const moved = await mapBounded(records, 32, async (r) => {
        if (r.status === 'deleted' || r.status === 'purged') return 0;
        const result = await memories.updateOne(
          { _id: r._id, tenant, status: r.status },
          { $set: { status: 'deleted', statusReason: `erasure:${requestId}`, updatedAt: new Date() }, $inc: { version: 1 } },
        );
        return result.modifiedCount;
      });
      return moved.reduce((a, b) => a + b, 0);
    },
    async restrict(tenant, ids, holdId) {
      await mapBounded([...ids], 32, (id) => memories.updateOne({ _id: id, tenant }, { $addToSet: { restrictedBy: holdId } }));
    },
    async purge(tenant, ids) {
      const results = await mapBounded([...ids], 32, (id) => memories.deleteOne({ _id: id, tenant }));
      return results.reduce((n, r) => n + r.deletedCount, 0);
    },
  };
}
