import type { Db } from 'mongodb';
import { Collections } from '../../substrate/mongo/collections.js';
import type { LegalHold } from './legal-hold.js';

/** Legal holds per tenant; a tenant has few active holds, so they are read whole. */
export interface HoldStore {
  ensureIndexes(): Promise<void>;
  place(hold: LegalHold): Promise<void>;
  get(tenant: string, id: string): Promise<LegalHold | null>;
  active(tenant: string): Promise<LegalHold[]>;
  /** Compare-and-set: releases only an active hold; returns whether this call released it. */
  release(tenant: string, id: string, by: string): Promise<boolean>;
}

export function createMongoHoldStore(db: Db): HoldStore {
  const holds = db.collection<LegalHold>(Collections.holds);
  return {
    async ensureIndexes() {
      await holds.createIndex({ tenant: 1, active: 1 });
    },
    async place(hold) {
      await holds.insertOne(hold);
    },
    async get(tenant, id) {
      const hold = await holds.findOne({ _id: id });
      return hold && hold.tenant === tenant ? hold : null;
    },
    async active(tenant) {
      return holds.find({ tenant, active: true }).toArray();
    },
    async release(tenant, id, by) {
      const result = await holds.updateOne(
        { _id: id, tenant, active: true },
        { $set: { active: false, releasedBy: by, releasedAt: new Date() } },
      );
      return result.modifiedCount === 1;
    },
  };
}
