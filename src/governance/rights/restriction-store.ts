import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { BoundedMap } from '../../shared/bounded-map.js';
import type { Fingerprinter } from '../../substrate/fingerprint.js';
import { Collections, findOwn, insertOnce, isDuplicateKey } from '../../substrate/mongo/collections.js';
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
  /** Every request about the subject of one of these hashes (one per live key), most recent filing first. */
  forSubjectHashes(tenant: string, hashes: readonly string[]): Promise<SubjectRestriction[]>;
  countActive(tenant: string): Promise<number>;
  /** Claims the lift with a unique insert; returns whether this call lifted it (false: already lifted). */
  lift(tenant: string, id: string, by: string, reasonHash: string): Promise<boolean>;
  /**
   * Marks the tenant's active set as changed: called after every filing and lift (again on a retry), before the
   * caller is answered, so every reader's next snapshot reloads it.
   */
  changed(tenant: string): Promise<void>;
  /**
   * The tenant's active set as the read judge's snapshot for one request: one equality lookup of the tenant's
   * generation, and a reload of the set (hashes and purposes only) only when a filing or lift changed it since.
   */
  snapshot(tenant: string): Promise<RestrictionSnapshot>;
}

/** Tenants whose active set this process keeps between requests; another is read again at its next request. */
const CACHED_TENANTS = 1024;

export function createMongoRestrictionStore(db: Db, fingerprints: Fingerprinter): RestrictionStore {
  const generations = db.collection<{ _id: string; generation: string; at: Date }>(Collections.restrictionGenerations);
  // Each entry is the set as read under one generation: valid for as long as the stored generation is the same.
  const cache = new BoundedMap<string, { generation: string; snapshot: RestrictionSnapshot }>(CACHED_TENANTS);
  const restrictions = db.collection<SubjectRestriction>(Collections.restrictions);
  const lifts = db.collection<{ _id: string; tenant: string; by: string; at: Date; reasonHash: string }>(
    Collections.restrictionLifts,
  );
  return {
    async ensureIndexes() {
      await restrictions.createIndex({ tenant: 1, active: 1 });
      await restrictions.createIndex({ tenant: 1, filedAt: -1 });
      await restrictions.createIndex({ tenant: 1, subjectHash: 1 });
    },
    async file(restriction) {
      const { doc, created } = await insertOnce(restrictions, restriction);
      return { restriction: doc, created };
    },
    get: (tenant, id) => findOwn(restrictions, tenant, id),
    page(tenant, limit, after) {
      return keysetPage(restrictions, { tenant }, 'filedAt', -1, limit, after);
    },
    async forSubjectHashes(tenant, hashes) {
      // One equality per hash: the local server scans for `$in`.
      const found = await Promise.all(
        [...new Set(hashes)].map((subjectHash) => restrictions.find({ tenant, subjectHash }).toArray()),
      );
      return found.flat().sort((a, b) => b.filedAt.getTime() - a.filedAt.getTime());
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
        const found = await findOwn(lifts, tenant, id);
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
    async changed(tenant) {
      // A fresh value, not a counter: the local server loses concurrent increments, and two writers that both
      // set a new value still leave one no reader has cached.
      const generation = randomUUID();
      await generations
        .updateOne({ _id: tenant }, { $set: { generation, at: new Date() } }, { upsert: true })
        .catch(async (error: unknown) => {
          // Two first filings of a tenant racing: the loser's upsert meets the winner's insert; set it again.
          if (!isDuplicateKey(error)) throw error;
          await generations.updateOne({ _id: tenant }, { $set: { generation, at: new Date() } });
        });
    },
    async snapshot(tenant) {
      // The generation is read before the set: a change landing between the two leaves a newer set under an older
      // generation, which the next request reloads; never an older set under a newer one.
      const generation = (await generations.findOne({ _id: tenant }))?.generation ?? 'none';
      const cached = cache.get(tenant);
      if (cached?.generation === generation) return cached.snapshot;
      // Filing stops at the bound; a tenant over it (filings racing past the count) is read whole all the same,
      // never cut short: a restriction left out would be served.
      const active =
        generation === 'none'
          ? []
          : await restrictions
              .find({ tenant, active: true }, { projection: { _id: 0, subjectHash: 1, purposes: 1, derivedIds: 1 } })
              .batchSize(MAX_ACTIVE_RESTRICTIONS + 1)
              .toArray();
      const snapshot = restrictionSnapshot(active, (subject) =>
        fingerprints.all('restriction-subject', tenant, subject),
      );
      cache.set(tenant, { generation, snapshot });
      return snapshot;
    },
  };
}
