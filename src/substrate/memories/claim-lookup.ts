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
  byIds(tenant: string, ids: readonly string[]): Promise<Claim[]>;
}

export function createClaimLookup(db: Db): ClaimLookup {
  const memories = db.collection<MemoryRecord>(Collections.memories);
  // A record an erasure has claimed reads as deleted here too, as through the memory store.
  const marks = createDeletionMarks(db);
  return {
    async ensureIndexes() {
      await memories.createIndex({ tenant: 1, attribute: 1 });
    },
    async bySubjectAttribute(tenant, subjects, attribute) {
      const found = await mapBounded([...new Set(subjects)], 8, (subject) =>
        memories.find({ tenant, attribute, subjects: subject }, { projection: CLAIM_FIELDS }).toArray(),
      );
      const byId = new Map((await marks.standing(tenant, found.flat())).map((r) => [r._id, claimOf(r)]));
      return [...byId.values()];
    },
    async byIds(tenant, ids) {
      const found = await mapBounded([...new Set(ids)], 32, (id) =>
        findOwn(memories, tenant, id, { projection: CLAIM_FIELDS }),
      );
      const mine = found.filter((r): r is NonNullable<typeof r> => r !== null);
      return (await marks.standing(tenant, mine)).map(claimOf);
    },
  };
}
