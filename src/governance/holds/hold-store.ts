import type { Db } from 'mongodb';
import type { Fingerprinter } from '../../substrate/fingerprint.js';
import { Collections, findOwn, isDuplicateKey } from '../../substrate/mongo/collections.js';
import type { LegalHold, StoredHoldScope } from './legal-hold.js';
import { keysetPage, type Page, type PageKey } from '../../substrate/mongo/keyset-page.js';

/** The keyed hash a subject hold keeps in place of the subject (HMAC with the current fingerprint key). */
export function holdSubjectHash(fingerprints: Fingerprinter, tenant: string, subjectId: string): string {
  return fingerprints.of('hold-subject', tenant, subjectId);
}

/** The subject's hash under every configured key: a hold placed before a rotation still covers its subject. */
export function holdSubjectHashes(fingerprints: Fingerprinter, tenant: string, subjectId: string): string[] {
  return fingerprints.all('hold-subject', tenant, subjectId);
}

/** Legal holds per tenant; a tenant has few active holds, so they are read whole. */
export interface HoldStore {
  ensureIndexes(): Promise<void>;
  /** Stores a subject hold with only the subject's keyed hash; returns the hold as stored. */
  place(hold: LegalHold): Promise<LegalHold>;
  get(tenant: string, id: string): Promise<LegalHold | null>;
  active(tenant: string): Promise<LegalHold[]>;
  /** Active holds, oldest placement first, a page at a time. */
  activePage(tenant: string, limit: number, after: PageKey | null): Promise<Page<LegalHold>>;
  /**
   * Compare-and-set: releases only an active hold; returns whether this call released it. A released subject
   * hold keeps only a keyed hash of the subject: once it no longer restricts anything, it need not name anyone.
   */
  release(tenant: string, id: string, by: string): Promise<boolean>;
}

export function createMongoHoldStore(db: Db, fingerprints: Fingerprinter): HoldStore {
  const holds = db.collection<LegalHold>(Collections.holds);
  const releases = db.collection<{ _id: string; tenant: string; by: string; at: Date }>(Collections.holdReleases);
  const get = (tenant: string, id: string) => findOwn(holds, tenant, id);
  return {
    async ensureIndexes() {
      await holds.createIndex({ tenant: 1, active: 1 });
    },
    async place(hold) {
      const stored = { ...hold, scope: hashedScope(fingerprints, hold.tenant, hold.scope) };
      await holds.insertOne(stored);
      return stored;
    },
    get,
    async active(tenant) {
      return holds.find({ tenant, active: true }).toArray();
    },
    activePage(tenant, limit, after) {
      return keysetPage(holds, { tenant, active: true }, 'placedAt', 1, limit, after);
    },
    async release(tenant, id, by) {
      const hold = await get(tenant, id);
      if (!hold?.active) return false;
      // A hold placed before subjects were hashed at placement is hashed now. Two releases racing compute the same
      // hash, so whichever write lands last leaves the same scope.
      const scope = hashedScope(fingerprints, tenant, hold.scope);
      // The release is claimed by a unique insert first: the local server does not make a conditional update
      // atomic, so two releases racing could both see `active: true`. Only the claim's winner reports it.
      let won = true;
      let claim = { by, at: new Date() };
      try {
        await releases.insertOne({ _id: id, tenant, ...claim });
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        won = false;
        const found = await releases.findOne({ _id: id, tenant });
        if (found) claim = { by: found.by, at: found.at };
      }
      // Applied by every caller, with the winner's name and time: a winner that stopped after its claim is
      // completed by whoever comes next, and the result is the same whoever writes it.
      await holds.updateOne(
        { _id: id, tenant, active: true },
        { $set: { active: false, releasedBy: claim.by, releasedAt: claim.at, scope } },
      );
      return won;
    },
  };
}

function hashedScope(fingerprints: Fingerprinter, tenant: string, scope: StoredHoldScope): StoredHoldScope {
  return 'subjectId' in scope ? { subjectHash: holdSubjectHash(fingerprints, tenant, scope.subjectId) } : scope;
}
