import type { Db, UpdateFilter } from 'mongodb';
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
  /** Records of a tenant in a status, oldest first, at most `limit`. */
  listByStatus(tenant: string, status: MemoryStatus, limit: number): Promise<MemoryRecord[]>;
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

/** The one successful claim of a move from a record's version. */
interface TransitionGuard {
  _id: string;
  tenant: string;
  from: MemoryStatus;
  to: MemoryStatus;
  reason: string | null;
  at: Date;
}

export function createMongoMemoryStore(db: Db): MemoryStore {
  const memories = db.collection<MemoryRecord>(Collections.memories);
  const guards = db.collection<TransitionGuard>(Collections.transitions);
  const apply = (
    record: MemoryRecord,
    to: MemoryStatus,
    reason: string | null,
    patch: Partial<Pick<MemoryRecord, 'validTo'>>,
  ) =>
    memories.updateOne(
      { _id: record._id, tenant: record.tenant, version: record.version },
      { $set: { status: to, statusReason: reason, updatedAt: new Date(), version: record.version + 1, ...patch } },
    );
  const getMany = async (tenant: string, ids: readonly string[]) => {
    const found = await mapBounded([...new Set(ids)], 32, (id) => memories.findOne({ _id: id }));
    return found.filter((r): r is MemoryRecord => r !== null && r.tenant === tenant);
  };
  const store: MemoryStore = {
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
      const record = await memories.findOne({ _id: id });
      if (!record || record.tenant !== tenant || record.status !== from) return false;
      // The local server does not make a conditional update atomic under concurrency, but a unique _id is:
      // the one insert of (id, version) that succeeds owns the move from that version.
      const guard: TransitionGuard = { _id: `${id}:${record.version}`, tenant, from, to, reason, at: new Date() };
      try {
        await guards.insertOne(guard);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        const winner = await guards.findOne({ _id: guard._id });
        if (!winner) throw error;
        // The winner may have crashed before applying its move: finish it (recover forward).
        await apply(record, winner.to, winner.reason, {});
        return winner.to === to && winner.reason === reason;
      }
      await apply(record, to, reason, patch);
      return true;
    },
    async idsBySubject(tenant, subject) {
      const docs = await memories.find({ tenant, subjects: subject }, { projection: { _id: 1 } }).toArray();
      return docs.map((d) => d._id);
    },
    async listByStatus(tenant, status, limit) {
      return memories.find({ tenant, status }).sort({ recordedAt: 1 }).limit(limit).toArray();
    },
    async idsByContentHash(tenant, contentHash) {
      const docs = await memories.find({ tenant, contentHash }, { projection: { _id: 1 } }).toArray();
      return docs.map((d) => d._id);
    },
    async idsByTime(tenant, field, from, to) {
      // A range is not pushed down on the local server (a scan per tenant); selectors by time are rare.
      const docs = await memories
        .find({ tenant, [field]: { $gte: from, $lt: to } }, { projection: { _id: 1 } })
        .toArray();
      return docs.map((d) => d._id);
    },
    async markDeleted(tenant, ids, requestId) {
      const moved = await mapBounded([...new Set(ids)], 32, async (id): Promise<number> => {
        // Any live status may move to deleted; a concurrent move (e.g. a review) is retried from its result.
        for (let attempt = 0; attempt < 5; attempt++) {
          const record = await memories.findOne({ _id: id });
          if (!record || record.tenant !== tenant) return 0;
          if (record.status === 'deleted' || record.status === 'purged') return attempt === 0 ? 0 : 1;
          if (await store.transition(tenant, id, record.status, 'deleted', `erasure:${requestId}`)) return 1;
        }
        throw new Error(`memory ${id}: could not be marked deleted under contention`);
      });
      return moved.reduce((a, b) => a + b, 0);
    },
    async restrict(tenant, ids, holdId) {
      const update = { $addToSet: { restrictedBy: holdId } } as unknown as UpdateFilter<MemoryRecord>;
      await mapBounded([...ids], 32, (id) => memories.updateOne({ _id: id, tenant }, update));
    },
    async purge(tenant, ids) {
      const results = await mapBounded([...ids], 32, (id) => memories.deleteOne({ _id: id, tenant }));
      return results.reduce((n, r) => n + r.deletedCount, 0);
    },
  };
  return store;
}
