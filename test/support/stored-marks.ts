/**
 * Rows as an oracle reads them: straight from MongoDB, with the marks stored beside them (legal holds, contests,
 * stale flags, correction marks, each a document of `record_marks`) laid on as the fields the rules speak of. Read
 * from the collections directly, never through the stores under test.
 */
import type { Db } from 'mongodb';
import { Collections } from '../../src/substrate/mongo/collections.js';

interface StoredMark {
  record: string;
  kind: 'hold' | 'contest' | 'stale' | 'corrected';
  key: string;
}

export async function withStoredMarks<R extends { _id: string; tenant: string }>(
  db: Db,
  rows: R[],
): Promise<(R & { restrictedBy?: string[]; contestedBy?: string[]; correctedBy?: string[]; stale?: unknown })[]> {
  const tenants = [...new Set(rows.map((r) => r.tenant))];
  const marks = await db
    .collection<StoredMark & { tenant: string }>(Collections.recordMarks)
    .find({ tenant: { $in: tenants } })
    .toArray();
  return rows.map((row) => {
    const own = marks.filter((m) => m.record === row._id && m.tenant === row.tenant);
    const of = (kind: StoredMark['kind']) => own.filter((m) => m.kind === kind).map((m) => m.key);
    const stored = row as R & {
      restrictedBy?: string[];
      contestedBy?: string[];
      correctedBy?: string[];
      stale?: unknown;
    };
    const stale = of('stale');
    return {
      ...stored,
      restrictedBy: [...(stored.restrictedBy ?? []), ...of('hold')],
      contestedBy: [...(stored.contestedBy ?? []), ...of('contest')],
      correctedBy: [...(stored.correctedBy ?? []), ...of('corrected')],
      ...(stored.stale === undefined && stale.length > 0 ? { stale: stale[0] } : {}),
    };
  });
}
