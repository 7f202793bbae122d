/**
 * Governance marks kept beside a record instead of in its row: a legal hold's read restriction, a rectification's
 * contest, a stale flag, a correction mark on an event. Each mark is a document of its own, written once by a unique
 * insert and taken back by a delete. The local server writes a whole row back on every update, so a mark kept in the
 * row could be dropped by any update computed from an older read; a mark of its own is touched by nothing but its
 * own writer. Reads lay the marks over the rows (`overlay`), so a record reads as marked from the moment its mark's
 * insert returns, whatever happens to its row afterwards.
 */
import type { Db } from 'mongodb';
import { findMatching } from './bounded-scan.js';
import { Collections, isDuplicateKey, mapBounded, ownRow } from './collections.js';

/** `hold`: a legal hold's read restriction; `contest`: an open rectification; `stale`: derived from a value since
 * corrected; `corrected`: an event a rectification found wrong. */
export type RecordMarkKind = 'hold' | 'contest' | 'stale' | 'corrected';

interface RecordMark {
  /** `<kind>:<record id>:<key>`: one mark per record, kind and key, so a retried add is a duplicate key. */
  _id: string;
  tenant: string;
  record: string;
  kind: RecordMarkKind;
  /** The hold id, the rectification request id, or the stale flag's cause. */
  key: string;
  at: Date;
}

/** The fields the marks stand for, as the record model names them. */
export interface Marked {
  _id: string;
  restrictedBy?: string[];
  contestedBy?: string[];
  correctedBy?: string[];
  stale?: { because: string; since: Date };
}

export interface RecordMarks {
  ensureIndexes(): Promise<void>;
  /** Marks the records; idempotent (a mark already there keeps its first date). */
  add(tenant: string, ids: readonly string[], kind: RecordMarkKind, key: string, at?: Date): Promise<void>;
  /** Takes the mark back from the records; idempotent. */
  remove(tenant: string, ids: readonly string[], kind: RecordMarkKind, key: string): Promise<void>;
  /**
   * The records with their marks laid over what their rows say (a row written before marks had their own documents
   * keeps what it carries). One indexed lookup when the tenant has no mark at all.
   */
  overlay<R extends Marked>(tenant: string, records: R[]): Promise<R[]>;
  /** Deletes every mark of these records (they are purged). */
  purge(tenant: string, ids: readonly string[]): Promise<void>;
}

const markId = (kind: RecordMarkKind, record: string, key: string) => `${kind}:${record}:${key}`;

export function createRecordMarks(db: Db): RecordMarks {
  const marks = db.collection<RecordMark>(Collections.recordMarks);
  return {
    async ensureIndexes() {
      await marks.createIndex({ tenant: 1, record: 1 });
    },
    async add(tenant, ids, kind, key, at = new Date()) {
      await mapBounded([...new Set(ids)], 32, async (record) => {
        try {
          await marks.insertOne({ _id: markId(kind, record, key), tenant, record, kind, key, at });
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
        }
      });
    },
    async remove(tenant, ids, kind, key) {
      await mapBounded([...new Set(ids)], 32, (record) => marks.deleteOne({ _id: markId(kind, record, key), tenant }));
    },
    async overlay(tenant, records) {
      if (records.length === 0) return records;
      if (!(await marks.findOne({ tenant }, { projection: { _id: 1 } }))) return records;
      const found = await findMatching(
        marks,
        tenant,
        'record',
        records.map((r) => r._id),
      );
      if (found.length === 0) return records;
      const byRecord = new Map<string, RecordMark[]>();
      for (const mark of found) byRecord.set(mark.record, [...(byRecord.get(mark.record) ?? []), mark]);
      return records.map((record) => {
        const own = byRecord.get(record._id);
        return own ? withMarks(record, own) : record;
      });
    },
    async purge(tenant, ids) {
      if (ids.length === 0) return;
      // Most records have no mark: find the few that do (one bounded pass over the tenant's marks when the records
      // are many), then delete those marks by `_id`, rather than a delete per record. A mark added to a purged record
      // after this read names a record that is gone, as one added after a delete per record would.
      const found = await findMatching(marks, tenant, 'record', ids, { projection: { _id: 1, record: 1 } });
      await mapBounded(found, 16, (mark) => marks.deleteOne(ownRow<RecordMark>(tenant, mark._id)));
    },
  };
}

function withMarks<R extends Marked>(record: R, own: readonly RecordMark[]): R {
  const keys = (kind: RecordMarkKind) => own.filter((m) => m.kind === kind).map((m) => m.key);
  const union = (stored: unknown, added: string[]) => {
    // A row value that is not a list is left as it is: the judges refuse what they cannot read.
    if (stored !== undefined && !Array.isArray(stored)) return stored as string[];
    const all = [...new Set([...((stored as string[] | undefined) ?? []), ...added])];
    return all;
  };
  const out: Marked = { ...record };
  const holds = keys('hold');
  if (holds.length > 0) out.restrictedBy = union(record.restrictedBy, holds);
  const contests = keys('contest');
  if (contests.length > 0) out.contestedBy = union(record.contestedBy, contests);
  const corrections = keys('corrected');
  if (corrections.length > 0) out.correctedBy = union(record.correctedBy, corrections);
  // The first stale flag stands: the earliest mark, unless the row already carries one.
  const stale = own.filter((m) => m.kind === 'stale').sort((a, b) => a.at.getTime() - b.at.getTime())[0];
  if (stale && record.stale === undefined) out.stale = { because: stale.key, since: stale.at };
  return out as R;
}
