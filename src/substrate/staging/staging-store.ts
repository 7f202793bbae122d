import type { Db } from 'mongodb';
import { Collections } from '../mongo/collections.js';

/**
 * Validated writes parked between the API and their workflow, so that content never travels through
 * workflow inputs or histories (invariant 9): workflows carry the stage id only.
 */
export interface StagedWrite<T> {
  _id: string;
  tenant: string;
  principal: string;
  body: T;
  createdAt: Date;
}

export interface StagingStore {
  put<T>(write: StagedWrite<T>): Promise<void>;
  get<T>(tenant: string, id: string): Promise<StagedWrite<T> | null>;
  discard(tenant: string, id: string): Promise<void>;
}

export function createMongoStagingStore(db: Db): StagingStore {
  const staging = db.collection<StagedWrite<unknown>>(Collections.staging);
  return {
    async put(write) {
      await staging.replaceOne({ _id: write._id }, write as StagedWrite<unknown>, { upsert: true });
    },
    async get<T>(tenant: string, id: string) {
      const write = await staging.findOne({ _id: id });
      return write && write.tenant === tenant ? (write as StagedWrite<T>) : null;
    },
    async discard(tenant, id) {
      await staging.deleteOne({ _id: id, tenant });
    },
  };
}
