import type { Db } from 'mongodb';
import type { Fingerprinter } from '../../substrate/fingerprint.js';
import { Collections } from '../../substrate/mongo/collections.js';
import type { LegalHold, StoredHoldScope } from './legal-hold.js';

/** The keyed hash a released subject hold keeps in place of the subject (HMAC with the fingerprint secret). */
export function holdSubjectHash(fingerprints: Fingerprinter, tenant: string, subjectId: string): string {
  return fingerprints.of('hold-subject', tenant, subjectId);
}

/** Legal holds per tenant; a tenant has few active holds, so they are read whole. */
export interface HoldStore {
  ensureIndexes(): Promise<void>;
  place(hold: LegalHold): Promise<void>;
  get(tenant: string, id: string): Promise<LegalHold | null>;
  active(tenant: string): Promise<LegalHold[]>;
  /**
   * Compare-and-set: releases only an active hold; returns whether this call released it. A released subject
   * hold keeps only a keyed hash of the subject: once it no longer restricts anything, it need not name anyone.
   */
  release(tenant: string, id: string, by: string): Promise<boolean>;
}

export function createMongoHoldStore(db: Db, fingerprints: Fingerprinter): HoldStore {
  const holds = db.collection<LegalHold>(Collections.holds);
  const get = async (tenant: string, id: string) => {
    const hold = await holds.findOne({ _id: id });
    return hold && hold.tenant === tenant ? hold : null;
  };
  return {
    async ensureIndexes() {
      await holds.createIndex({ tenant: 1, active: 1 });
    },
    async place(hold) {
      await holds.insertOne(hold);
    },
    get,
    async active(tenant) {
      return holds.find({ tenant, active: true }).toArray();
    },
    async release(tenant, id, by) {
      const hold = await get(tenant, id);
      if (!hold?.active) return false;
      // Two releases racing compute the same hash, so whichever write lands last leaves the same scope.
      const scope: StoredHoldScope =
        'subjectId' in hold.scope
          ? { subjectHash: holdSubjectHash(fingerprints, tenant, hold.scope.subjectId) }
          : hold.scope;
      const result = await holds.updateOne(
        { _id: id, tenant, active: true },
        { $set: { active: false, releasedBy: by, releasedAt: new Date(), scope } },
      );
      return result.modifiedCount === 1;
    },
  };
}
