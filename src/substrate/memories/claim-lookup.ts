import type { Db } from 'mongodb';
import type { MemoryRecord } from '../model/records.js';
import { Collections, findOwn, mapBounded } from '../mongo/collections.js';
import { createDeletionMarks } from './deletion-marks.js';

const CLAIM_FIELDS = {
  _id: 1,
  tenant: 1,
  status: 1,
  statusReason: 1,
  version: 1,
  kind: 1,
  subjects: 1,
  attribute: 1,
  contentHash: 1,
  validFrom: 1,
  validTo: 1,
  writtenBy: 1,
  namespace: 1,
  recordedAt: 1,
} as const;

/** A memory as a claim: who says what (by content hash) about which subject's attribute, over which valid time. */
export interface Claim {
  id: string;
  status: MemoryRecord['status'];
  kind: string;
  subjects: string[];
  attribute: string | null;
  contentHash: string;
  validFrom: Date;
  validTo: Date | null;
  writtenBy: string;
  namespace: string;
  /** When it was written. */
  recordedAt: Date;
}

/** A record as a claim (its content left out). */
export function claimOf(r: Pick<MemoryRecord, Exclude<keyof typeof CLAIM_FIELDS, 'version' | 'statusReason'>>): Claim {
  return {
    id: r._id,
    status: r.status,
    kind: r.kind,
    subjects: r.subjects,
    attribute: r.attribute,
    contentHash: r.contentHash,
    validFrom: r.validFrom,
    validTo: r.validTo,
    writtenBy: r.writtenBy,
    namespace: r.namespace,
    recordedAt: r.recordedAt,
  };
}

/**
 * Claims about a subject's attribute, read without their content: what a new memory is compared with. One
 * equality query per subject on top-level fields (the local server pushes those down; `$in` it scans).
 */
export interface ClaimLookup {
  ensureIndexes(): Promise<void>;
  bySubjectAttribute(tenant: string, subjects: readonly string[], attribute: string): Promise<Claim[]>;
  /**
   * `bySubjectAttribute` for many records at once (a batch's): each distinct (subject, attribute) looked up once, the
   * lookups in parallel, and the deletion marks read once for all they found. Each query's claims, in query order.
   */
  bySubjectAttributes(tenant: string, queries: readonly ClaimQuery[]): Promise<Claim[][]>;
  byIds(tenant: string, ids: readonly string[]): Promise<Claim[]>;
}

/** What one record's claims are looked up by. */
export interface ClaimQuery {
  subjects: readonly string[];
  attribute: string;
}

/** Distinct (subject, attribute) lookups in flight at once. */
const LOOKUP_CONCURRENCY = 32;

export function createClaimLookup(db: Db): ClaimLookup {
  const memories = db.collection<MemoryRecord>(Collections.memories);
  // A record an erasure has claimed reads as deleted here too, as through the memory store.
  const marks = createDeletionMarks(db);
  const bySubjectAttributes: ClaimLookup['bySubjectAttributes'] = async (tenant, queries) => {
    const keyOf = (subject: string, attribute: string) => JSON.stringify([attribute, subject]);
    const pairs = new Map<string, { subject: string; attribute: string }>();
    for (const q of queries)
      for (const subject of q.subjects) pairs.set(keyOf(subject, q.attribute), { subject, attribute: q.attribute });
    const found = await mapBounded([...pairs.entries()], LOOKUP_CONCURRENCY, async ([key, { subject, attribute }]) => {
      const docs = await memories
        .find({ tenant, attribute, subjects: subject }, { projection: CLAIM_FIELDS })
        .toArray();
      return [key, docs] as const;
    });
    const unique = new Map(found.flatMap(([, docs]) => docs.map((d) => [d._id, d] as const)));
    const standing = new Map((await marks.standing(tenant, [...unique.values()])).map((r) => [r._id, claimOf(r)]));
    const idsOf = new Map(found.map(([key, docs]) => [key, docs.map((d) => d._id)]));
    return queries.map((q) => {
      const ids = new Set(q.subjects.flatMap((subject) => idsOf.get(keyOf(subject, q.attribute)) ?? []));
      return [...ids].flatMap((id) => {
        const claim = standing.get(id);
        return claim ? [claim] : [];
      });
    });
  };
  return {
    async ensureIndexes() {
      await memories.createIndex({ tenant: 1, attribute: 1 });
    },
    async bySubjectAttribute(tenant, subjects, attribute) {
      return (await bySubjectAttributes(tenant, [{ subjects, attribute }]))[0]!;
    },
    bySubjectAttributes,
    async byIds(tenant, ids) {
      const found = await mapBounded([...new Set(ids)], 32, (id) =>
        findOwn(memories, tenant, id, { projection: CLAIM_FIELDS }),
      );
      const mine = found.filter((r): r is NonNullable<typeof r> => r !== null);
      return (await marks.standing(tenant, mine)).map(claimOf);
    },
  };
}
