import type { Db } from 'mongodb';
import { Collections, findOwn, replaceOwn } from '../../substrate/mongo/collections.js';
import { createMongoErasureFactsStore, type ErasureFacts } from './erasure-facts-store.js';

/** The id sets an erasure works on (located, closure, to erase, held), kept out of workflow histories. */
export type ErasureSetName = 'located' | 'closure' | 'erase' | 'held' | 'purged' | 'collateral';

interface SetDoc {
  _id: string;
  tenant: string;
  requestId: string;
  ids: string[];
  /** For `held`: which hold keeps each id. */
  holdOf?: Record<string, string>;
}

export interface ErasureSetStore {
  put(
    tenant: string,
    requestId: string,
    name: ErasureSetName,
    ids: readonly string[],
    holdOf?: Record<string, string>,
  ): Promise<void>;
  get(
    tenant: string,
    requestId: string,
    name: ErasureSetName,
  ): Promise<{ ids: string[]; holdOf: Record<string, string> }>;
  /** Drops the sets and the facts. */
  drop(tenant: string, requestId: string): Promise<void>;
  /** What the closure read of its records, for the marking (see `ErasureFactsStore`). */
  putFacts(tenant: string, requestId: string, facts: ErasureFacts): Promise<void>;
  getFacts(tenant: string, requestId: string): Promise<ErasureFacts>;
  dropFacts(tenant: string, requestId: string): Promise<void>;
}

export function createMongoErasureSetStore(db: Db): ErasureSetStore {
  const sets = db.collection<SetDoc>(Collections.erasureSets);
  const id = (requestId: string, name: ErasureSetName) => `${requestId}:${name}`;
  const facts = createMongoErasureFactsStore(db);
  let indexed: Promise<void> | null = null;
  const ensureFactsIndex = () =>
    (indexed ??= facts.ensureIndexes().catch((error: unknown) => {
      indexed = null;
      throw error;
    }));
  return {
    async putFacts(tenant, requestId, known) {
      await ensureFactsIndex();
      await facts.put(tenant, requestId, known);
    },
    getFacts: (tenant, requestId) => facts.get(tenant, requestId),
    dropFacts: (tenant, requestId) => facts.drop(tenant, requestId),
    async put(tenant, requestId, name, ids, holdOf) {
      await replaceOwn(sets, id(requestId, name), {
        tenant,
        requestId,
        ids: [...ids],
        ...(holdOf ? { holdOf } : {}),
      });
    },
    async get(tenant, requestId, name) {
      const doc = await findOwn(sets, tenant, id(requestId, name));
      return doc ? { ids: doc.ids, holdOf: doc.holdOf ?? {} } : { ids: [], holdOf: {} };
    },
    async drop(tenant, requestId) {
      for (const name of ['located', 'closure', 'erase', 'held', 'purged', 'collateral'] as const) {
        await sets.deleteOne({ _id: id(requestId, name), tenant });
      }
      await facts.drop(tenant, requestId);
    },
  };
}
