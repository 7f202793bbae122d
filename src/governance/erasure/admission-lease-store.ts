import type { Db } from 'mongodb';
import type { Fingerprinter } from '../../substrate/fingerprint.js';
import { Collections, isDuplicateKey, mapBounded } from '../../substrate/mongo/collections.js';

/**
 * Admissions in flight, so that no write outlives an erasure's fence. An admission opens its lease before its
 * first fence check and closes it after its last; an erasure lowers its fences only once every lease open when it
 * came to lower them is closed or revoked. A lease whose admission stopped renewing it (a dead attempt), or that
 * is still open when the wait ends, is revoked: its admission, on its check after writing or on a retry, finds the
 * revocation (or no lease at all) and takes back what it wrote. Only ids and times are kept.
 */
export interface AdmissionLeaseStore {
  /** How often an admission renews its lease: a third of it, so two renewals may be lost before it expires. */
  readonly renewEveryMs: number;
  ensureIndexes(): Promise<void>;
  /** Opens (or, on a retry of the stage, reopens) the stage's lease; tells if an erasure revoked it meanwhile. */
  open(tenant: string, stageId: string): Promise<LeaseStanding>;
  /** Extends an open lease; a revoked or closed one stays so. */
  renew(tenant: string, stageId: string): Promise<void>;
  standing(tenant: string, stageId: string): Promise<LeaseStanding>;
  /** The admission is over (written, refused, or its stage discarded). Idempotent. */
  close(tenant: string, stageId: string): Promise<void>;
  /**
   * Waits until every lease of the tenant open now is closed, revoking those that expire and, after the wait's
   * bound, those still open: then no admission that checked before the request's fences can write after them.
   */
  drain(tenant: string, requestId: string): Promise<{ awaited: number; revoked: number }>;
}

/** Open and renewed; revoked by an erasure request; or gone (closed, or never opened). */
export type LeaseStanding = { state: 'open' } | { state: 'revoked'; requestId: string } | { state: 'missing' };

export interface AdmissionLeaseTiming {
  /** How long a lease lasts without renewal: a dead attempt's lease expires after this. */
  leaseMs: number;
  /** How long lowering a fence waits for open leases before revoking them (within the activity's timeout). */
  maxWaitMs: number;
  pollMs: number;
}

/** A lowering waits a minute at most: the activity that lowers has two. */
export const DEFAULT_LEASE_TIMING: AdmissionLeaseTiming = { leaseMs: 30_000, maxWaitMs: 60_000, pollMs: 200 };

interface LeaseDoc {
  /** Keyed hash of (tenant, stage). */
  _id: string;
  tenant: string;
  openedAt: Date;
  expiresAt: Date;
  /** Requests that waited for this admission before lowering their fences. */
  awaitedBy?: string[];
  /** The request that revoked it; absent while the lease stands. */
  revokedBy?: string;
}

const standingOf = (doc: LeaseDoc | null): LeaseStanding =>
  !doc ? { state: 'missing' } : doc.revokedBy ? { state: 'revoked', requestId: doc.revokedBy } : { state: 'open' };

export function createMongoAdmissionLeaseStore(
  db: Db,
  fingerprints: Fingerprinter,
  timing: AdmissionLeaseTiming = DEFAULT_LEASE_TIMING,
): AdmissionLeaseStore {
  const leases = db.collection<LeaseDoc>(Collections.admissionLeases);
  const idOf = (tenant: string, stageId: string) => fingerprints.of('admission-lease', tenant, stageId);
  const standing = { revokedBy: { $exists: false } };
  // By id, one lookup or update each (few leases are open at once): the local server scans the collection for
  // an `$in` of ids, and pushes an `_id` equality down.
  const openIn = async (tenant: string, ids?: string[]) =>
    ids
      ? (
          await mapBounded(ids, 16, async (_id) =>
            leases.findOne({ _id, tenant, ...standing }, { projection: { _id: 1 } }),
          )
        ).flatMap((d) => (d ? [d._id] : []))
      : (await leases.find({ tenant, ...standing }, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
  const revoke = async (ids: string[], requestId: string, filter: Record<string, unknown> = {}) =>
    (
      await mapBounded(ids, 16, async (_id) =>
        leases.updateOne({ _id, ...standing, ...filter }, { $set: { revokedBy: requestId } }),
      )
    ).reduce((n, r) => n + r.modifiedCount, 0);
  return {
    renewEveryMs: Math.max(1, Math.floor(timing.leaseMs / 3)),
    async ensureIndexes() {
      await leases.createIndex({ tenant: 1 });
    },
    async open(tenant, stageId) {
      const _id = idOf(tenant, stageId);
      const expiresAt = new Date(Date.now() + timing.leaseMs);
      for (let attempt = 0; ; attempt++) {
        try {
          // A revoked lease stays revoked: its retry must take back what the earlier attempt wrote.
          return standingOf(
            await leases.findOneAndUpdate(
              { _id },
              { $setOnInsert: { tenant, openedAt: new Date() }, $set: { expiresAt } },
              { upsert: true, returnDocument: 'after' },
            ),
          );
        } catch (error) {
          // Two attempts of one stage racing the upsert: the loser's lease is the winner's.
          if (!isDuplicateKey(error) || attempt > 0) throw error;
        }
      }
    },
    async renew(tenant, stageId) {
      await leases.updateOne(
        { _id: idOf(tenant, stageId), ...standing },
        { $set: { expiresAt: new Date(Date.now() + timing.leaseMs) } },
      );
    },
    async standing(tenant, stageId) {
      return standingOf(await leases.findOne({ _id: idOf(tenant, stageId) }));
    },
    async close(tenant, stageId) {
      await leases.deleteOne({ _id: idOf(tenant, stageId) });
    },
    async drain(tenant, requestId) {
      // Only the leases open now: one opened later checks the fences after they were all raised, and sees them.
      let waiting = await openIn(tenant);
      const awaited = waiting.length;
      if (awaited === 0) return { awaited, revoked: 0 };
      await mapBounded(waiting, 16, (_id) => leases.updateOne({ _id }, { $addToSet: { awaitedBy: requestId } }));
      const deadline = Date.now() + timing.maxWaitMs;
      let revoked = 0;
      for (;;) {
        revoked += await revoke(waiting, requestId, { expiresAt: { $lt: new Date() } });
        waiting = await openIn(tenant, waiting);
        if (waiting.length === 0) return { awaited, revoked };
        if (Date.now() >= deadline) return { awaited, revoked: revoked + (await revoke(waiting, requestId)) };
        await new Promise((resolve) => setTimeout(resolve, timing.pollMs));
      }
    },
  };
}
