import type { Db } from 'mongodb';
import { Collections, isDuplicateKey, mapBounded } from '../../substrate/mongo/collections.js';

/** A counter of a tenant's usage: writes of one UTC day, or bytes of content stored. */
interface UsageCounter {
  _id: string;
  tenant: string;
  value: number;
}

/** The bytes one stored record holds, so that its erasure gives them back once. */
interface StoredRecord {
  _id: string;
  tenant: string;
  bytes: number;
}

/**
 * A tenant's usage against its quotas, kept in MongoDB so that every API process counts against the same figures.
 * Counts and ids only: never content.
 */
export interface TenantUsageStore {
  /** Adds `amount` to a counter unless that would take it past `limit`; returns whether it was added. */
  take(tenant: string, counter: UsageCounterName, amount: number, limit: number): Promise<boolean>;
  /** Takes back what `take` added and was not used (a duplicate, a refusal, a failed write). */
  giveBack(tenant: string, counter: UsageCounterName, amount: number): Promise<void>;
  /** Records which stored records hold the bytes taken, so that `release` finds them. */
  recordStored(tenant: string, records: readonly { id: string; bytes: number }[]): Promise<void>;
  /** Gives back the stored bytes of erased records; idempotent (a retry finds nothing left and counts zero). */
  release(tenant: string, ids: readonly string[]): Promise<number>;
  value(tenant: string, counter: UsageCounterName): Promise<number>;
  ensureIndexes(): Promise<void>;
}

/** `stored-bytes`, or `writes:<UTC day>`. */
export type UsageCounterName = 'stored-bytes' | `writes:${string}`;

export function createMongoTenantUsageStore(db: Db): TenantUsageStore {
  const counters = db.collection<UsageCounter>(Collections.tenantUsage);
  const stored = db.collection<StoredRecord>(Collections.storedRecords);
  const key = (tenant: string, counter: string) => `${tenant}:${counter}`;
  const add = async (tenant: string, counter: string, amount: number) => {
    const after = await counters.findOneAndUpdate(
      { _id: key(tenant, counter) },
      { $inc: { value: amount }, $setOnInsert: { tenant } },
      { upsert: true, returnDocument: 'after' },
    );
    return after?.value ?? amount;
  };
  return {
    async take(tenant, counter, amount, limit) {
      // Added first and taken back when over: the increment is atomic, so two processes racing for the last of a
      // quota cannot both pass.
      if ((await add(tenant, counter, amount)) <= limit) return true;
      await add(tenant, counter, -amount);
      return false;
    },
    async giveBack(tenant, counter, amount) {
      if (amount > 0) await add(tenant, counter, -amount);
    },
    async recordStored(tenant, records) {
      await mapBounded([...records], 32, async (r) => {
        try {
          await stored.insertOne({ _id: key(tenant, r.id), tenant, bytes: r.bytes });
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
        }
      });
    },
    async release(tenant, ids) {
      const released = await mapBounded([...new Set(ids)], 32, async (id) => {
        // Whoever deletes the record's entry gives its bytes back: a retried erasure gives nothing twice.
        const entry = await stored.findOneAndDelete({ _id: key(tenant, id) });
        if (!entry) return 0;
        await add(tenant, 'stored-bytes', -entry.bytes);
        return 1;
      });
      return released.reduce<number>((n, r) => n + r, 0);
    },
    async value(tenant, counter) {
      return (await counters.findOne({ _id: key(tenant, counter) }))?.value ?? 0;
    },
    async ensureIndexes() {
      await counters.createIndex({ tenant: 1 });
      await stored.createIndex({ tenant: 1 });
    },
  };
}
