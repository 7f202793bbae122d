import type { Db } from 'mongodb';

/** Collection of the sweep's per-tenant state: one small document per tenant, read by `_id`. */
export const RETENTION_SWEEPS_COLLECTION = 'retention_sweeps';

/** Counts of one sweep run (ids never: they stay in the records and the erasure requests). */
export interface SweepTotals {
  /** Records read from the queue. */
  scanned: number;
  /** Records moved `active` → `expired`. */
  expired: number;
  /** Records named in an erasure request filed on ground retention-expiry. */
  handedOff: number;
  /** Erasure requests filed. */
  erasures: number;
  /** Records whose bucket did not match their `expiresAt` and were put back in the right one. */
  requeued: number;
  /** Records already deleted or purged when the sweep reached them (left the queue, nothing filed). */
  gone: number;
}

export const ZERO_TOTALS: SweepTotals = { scanned: 0, expired: 0, handedOff: 0, erasures: 0, requeued: 0, gone: 0 };

export interface SweepState {
  _id: string;
  tenant: string;
  registeredAt: Date;
  /** Every bucket before this one has been drained (exclusive); `null` before the first complete sweep. */
  sweptBefore: string | null;
  lastRun: (SweepTotals & { finishedAt: Date }) | null;
}

/** Which tenants have a retention schedule, and how far each tenant's sweep has come. */
export interface SweepStateStore {
  /** Idempotent: records that the tenant is swept (its schedule exists or is being created). */
  register(tenant: string): Promise<void>;
  get(tenant: string): Promise<SweepState | null>;
  tenants(): Promise<string[]>;
  /** Moves the watermark forward only (a late, slower run never moves it back). */
  advance(tenant: string, sweptBefore: string): Promise<void>;
  recordRun(tenant: string, totals: SweepTotals): Promise<void>;
  /** The tenant is no longer swept (offboarded): its state goes. Idempotent. */
  unregister(tenant: string): Promise<void>;
}

export function createMongoSweepStateStore(db: Db): SweepStateStore {
  const sweeps = db.collection<SweepState>(RETENTION_SWEEPS_COLLECTION);
  const register = async (tenant: string) => {
    await sweeps.updateOne(
      { _id: tenant },
      { $setOnInsert: { tenant, registeredAt: new Date(), sweptBefore: null, lastRun: null } },
      { upsert: true },
    );
  };
  return {
    register,
    async get(tenant) {
      return sweeps.findOne({ _id: tenant });
    },
    async tenants() {
      return (await sweeps.find({}, { projection: { _id: 1 } }).toArray()).map((s) => s._id).sort();
    },
    async advance(tenant, sweptBefore) {
      await register(tenant);
      const state = await sweeps.findOne({ _id: tenant });
      if (state?.sweptBefore && state.sweptBefore >= sweptBefore) return;
      await sweeps.updateOne({ _id: tenant, sweptBefore: state?.sweptBefore ?? null }, { $set: { sweptBefore } });
    },
    async recordRun(tenant, totals) {
      await sweeps.updateOne({ _id: tenant }, { $set: { lastRun: { ...totals, finishedAt: new Date() } } });
    },
    async unregister(tenant) {
      await sweeps.deleteOne({ _id: tenant });
    },
  };
}
