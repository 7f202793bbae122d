import { randomUUID } from 'node:crypto';
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
 * A move in flight: opened before its guard is claimed and closed once its row is written and settled, or, for an
 * erasure's marking whose rows are rewritten only by the purge (see `MemoryStore.markDeleted`'s `rowsAtPurge`), once
 * the rows are gone. While one is open for a tenant, reads of the tenant's records follow the guards of their
 * versions, so a move whose writer died between its claim and its row (or whose row a stale rewrite put back) still
 * reads as made. A writer that dies leaves its mark open: reads keep following guards, slower but right.
 */
interface DeletionMark {
  _id: string;
  tenant: string;
  requestId: string;
  at: Date;
}

type Standing = Pick<MemoryRecord, '_id' | 'version' | 'status' | 'statusReason'>;

/** Guards followed from one version to the next before a read gives up on a record that keeps moving. */
const CHAIN_LIMIT = 16;

/** Open marks of moves in flight, and records read as they stand under them. */
export interface DeletionMarks {
  ensureIndexes(): Promise<void>;
  /** Opens a request's mark; idempotent. Open it before any guard of the marking is claimed. */
  open(tenant: string, requestId: string): Promise<void>;
  /** Closes it once the marked records' rows are gone; idempotent. */
  close(tenant: string, requestId: string): Promise<void>;
  /**
   * Runs one claim-and-write of moves under a mark of its own: opened before, closed after `write` returns. A write
   * that throws leaves its mark open, since its claims may stand with their rows unwritten.
   */
  inFlight<T>(tenant: string, write: () => Promise<T>): Promise<T>;
  /**
   * The records as they stand: while any mark is open for the tenant, each record's chain of claimed guards from its
   * row's version is followed, and the moves they claim read as made (status, reason, the fields each move set).
   * One indexed lookup when the tenant has no open mark.
   */
  standing<R extends Standing>(tenant: string, records: R[]): Promise<R[]>;
}

export function createDeletionMarks(db: Db): DeletionMarks {
  const marks = db.collection<DeletionMark>(Collections.deletionMarks);
  const guards = db.collection<TransitionGuard>(Collections.transitions);
  const markId = (tenant: string, requestId: string) => `${tenant}:${requestId}`;
  const open = async (tenant: string, requestId: string) => {
    try {
      await marks.insertOne({ _id: markId(tenant, requestId), tenant, requestId, at: new Date() });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
  };
  const close = async (tenant: string, requestId: string) => {
    await marks.deleteOne({ _id: markId(tenant, requestId), tenant });
  };
  return {
    async ensureIndexes() {
      await marks.createIndex({ tenant: 1 });
    },
    open,
    close,
    async inFlight(tenant, write) {
      const id = `move:${randomUUID()}`;
      await open(tenant, id);
      const result = await write();
      await close(tenant, id);
      return result;
    },
    async standing(tenant, records) {
      if (records.length === 0) return records;
      if (!(await marks.findOne({ tenant }, { projection: { _id: 1 } }))) return records;
      const out = [...records];
      // Guards are many per tenant (every move ever made): look them up by `_id`, never by a pass over the tenant.
      let pending = out.map((_, i) => i);
      for (let step = 0; pending.length > 0 && step < CHAIN_LIMIT; step++) {
        const claimed = new Map<string, TransitionGuard>(
          (
            await findByIds(
              guards,
              tenant,
              pending.map((i) => guardIdOf(out[i]!)),
              { scan: false },
            )
          ).map((g) => [g._id, g]),
        );
        pending = pending.filter((i) => {
          const record = out[i]!;
          const guard = claimed.get(guardIdOf(record));
          if (!guard) return false;
          out[i] = {
            ...record,
            ...(guard.patch ?? {}),
            status: guard.to,
            statusReason: guard.reason,
            version: record.version + 1,
          };
          return true;
        });
      }
      return out;
    },
  };
}
