import type { Db } from 'mongodb';
import type { Fingerprinter } from '../../substrate/fingerprint.js';
import { Collections, isDuplicateKey } from '../../substrate/mongo/collections.js';
import { keysetPage, type Page, type PageKey } from '../../substrate/mongo/keyset-page.js';
import {
  MAX_ACTIVE_RESTRICTIONS,
  restrictionSnapshot,
  type RestrictionSnapshot,
  type SubjectRestriction,
} from './restriction.js';

/** The keyed hash a restriction keeps in place of its subject (HMAC under the current fingerprint key). */
export function restrictionSubjectHash(fingerprints: Fingerprinter, tenant: string, subjectId: string): string {
  return fingerprints.of('restriction-subject', tenant, subjectId);
}

/** Restrictions and objections per tenant; the active ones are few enough to be read whole (bounded at filing). */
export interface RestrictionStore {
  ensureIndexes(): Promise<void>;
  /** Stores the request under its id; filing an id again returns the stored one and `created: false`. */
  file(restriction: SubjectRestriction): Promise<{ restriction: SubjectRestriction; created: boolean }>;
  get(tenant: string, id: string): Promise<SubjectRestriction | null>;
  /** Every request, most recent filing first, a page at a time. */
  page(tenant: string, limit: number, after: PageKey | null): Promise<Page<SubjectRestriction>>;
  countActive(tenant: string): Promise<number>;
  /** Claims the lift with a unique insert; returns whether this call lifted it (false: already lifted). */
  lift(tenant: string, id: string, by: string, reasonHash: string): Promise<boolean>;
  /**
   * One read of the tenant's active set — an equality lookup on (tenant, active), hashes and purposes only — as
   * the read judge's snapshot for one request.
   */
  snapshot(tenant: string): Promise<RestrictionSnapshot>;
}

export function createMongoRestrictionStore(db: Db, fingerprints: Fingerprinter): RestrictionStore {
  const restrictions = db.collection<SubjectRestriction>(Collections.restrictions);
  const lifts = db.collection<{ _id: string; tenant: string; by: string; at: Date; reasonHash: string }>(
    Collections.restrictionLifts,
  );
  const get = async (tenant: string, id: string) => {
    const found = await restrictions.findOne({ _id: id });
    return found && found.tenant === tenant ? found : null;
  };
  return {
    async ensureIndexes() {
      await restrictions.createIndex({ tenant: 1, active: 1 });
      await restrictions.createIndex({ tenant: 1, filedAt: -1 });
    },
    async file(restriction) {
      try {
        await restrictions.insertOne(restriction);
        return { restriction, created: true };
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        const found = await get(restriction.tenant, restriction._id);
        if (!found) throw error;
        return { restriction: found, created: false };
      }
    },
    get,
    page(tenant, limit, after) {
      return keysetPage(restrictions, { tenant }, 'filedAt', -1, limit, after);
    },
    countActive(tenant) {
      return restrictions.countDocuments({ tenant, active: true });
    },
    async lift(tenant, id, by, reasonHash) {
      let won = true;
      let claim = { by, at: new Date(), reasonHash };
      try {
        await lifts.insertOne({ _id: id, tenant, ...claim });
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        won = false;
        const found = await lifts.findOne({ _id: id });
        if (found) claim = { by: found.by, at: found.at, reasonHash: found.reasonHash };
      }
      // Applied by every caller with the winner's claim: a winner that stopped after its claim is completed by
      // whoever comes next, and the result is the same whoever writes it.
      await restrictions.updateOne(
        { _id: id, tenant },
        { $set: { active: false, liftedBy: claim.by, liftedAt: claim.at, liftReasonHash: claim.reasonHash } },
      );
      return won;
    },
    async snapshot(tenant) {
      // Filing stops at the bound; a tenant over it (filings racing past the count) is read whole all the same,
      // never cut short: a restriction left out would be served.
      const active = await restrictions
        .find({ tenant, active: true }, { projection: { _id: 0, subjectHash: 1, purposes: 1 } })
        .batchSize(MAX_ACTIVE_RESTRICTIONS + 1)
        .toArray();
      return restrictionSnapshot(active, (subject) => fingerprints.all('restriction-subject', tenant, subject));
    },
  };
}
