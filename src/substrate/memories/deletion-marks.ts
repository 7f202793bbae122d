import type { Db } from 'mongodb';
import type { MemoryStatus } from '../../shared/lifecycle.js';
import type { MemoryRecord } from '../model/records.js';
import { findByIds } from '../mongo/bounded-scan.js';
import { Collections, isDuplicateKey } from '../mongo/collections.js';

/** The one successful claim of a move from a record's version (`memory_transitions`, keyed `<id>:<version>`). */
export interface TransitionGuard {
  _id: string;
  tenant: string;
  from: MemoryStatus;
  to: MemoryStatus;
  reason: string | null;
  at: Date;
  /** The other fields the move set (e.g. the retention slot), so that whoever finishes the move makes all of it. */
  patch?: Record<string, unknown>;
}

export const guardIdOf = (record: Pick<MemoryRecord, '_id' | 'version'>) => `${record._id}:${record.version}`;

/**
 * An erasure's marking whose rows are rewritten only by the purge (see `MemoryStore.markDeleted`'s `rowsAtPurge`):
 * while one is open for a tenant, reads of the tenant's records look up the guards of their current versions.
 */
interface DeletionMark {
  _id: string;
  tenant: string;
  requestId: string;
  at: Date;
}

type Standing = Pick<MemoryRecord, '_id' | 'version' | 'status' | 'statusReason'>;

/** Open deletion marks, and records read as they stand under them. */
export interface DeletionMarks {
  ensureIndexes(): Promise<void>;
  /** Opens a request's mark; idempotent. Open it before any guard of the marking is claimed. */
  open(tenant: string, requestId: string): Promise<void>;
  /** Closes it once the marked records' rows are gone; idempotent. */
  close(tenant: string, requestId: string): Promise<void>;
  /**
   * The records as they stand: one whose current version a `deleted` guard has claimed, while a mark is open for the
   * tenant, reads as that move made. One indexed lookup when the tenant has no open mark.
   */
  standing<R extends Standing>(tenant: string, records: R[]): Promise<R[]>;
}

export function createDeletionMarks(db: Db): DeletionMarks {
  const marks = db.collection<DeletionMark>(Collections.deletionMarks);
  const guards = db.collection<TransitionGuard>(Collections.transitions);
  const markId = (tenant: string, requestId: string) => `${tenant}:${requestId}`;
  return {
    async ensureIndexes() {
      await marks.createIndex({ tenant: 1 });
    },
    async open(tenant, requestId) {
      try {
        await marks.insertOne({ _id: markId(tenant, requestId), tenant, requestId, at: new Date() });
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    },
    async close(tenant, requestId) {
      await marks.deleteOne({ _id: markId(tenant, requestId), tenant });
    },
    async standing(tenant, records) {
      if (records.length === 0) return records;
      if (!(await marks.findOne({ tenant }, { projection: { _id: 1 } }))) return records;
      // Guards are many per tenant (every move ever made): look them up by `_id`, never by a pass over the tenant.
      const claimed = new Map<string, TransitionGuard>(
        (await findByIds(guards, tenant, records.map(guardIdOf), { scan: false }))
          .filter((g) => g.to === 'deleted')
          .map((g) => [g._id, g]),
      );
      return records.map((record) => {
        const guard = claimed.get(guardIdOf(record));
        return guard
          ? { ...record, status: guard.to, statusReason: guard.reason, version: record.version + 1 }
          : record;
      });
    },
  };
}
