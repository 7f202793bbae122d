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
}

export function createMongoMemoryStore(db: Db): MemoryStore {
  const memories = db.collection<MemoryRecord>(Collections.memories);
  return {
    async ensureIndexes() {
      await memories.createIndex({ tenant: 1, subjects: 1 });
      await memories.createIndex({ tenant: 1, status: 1 });
      await memories.createIndex({ tenant: 1, expiresAt: 1 });
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
    async getMany(tenant, ids) {
      const found = await mapBounded([...new Set(ids)], 32, (id) => memories.findOne({ _id: id }));
      return found.filter((r): r is MemoryRecord => r !== null && r.tenant === tenant);
    },
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
  };
}
