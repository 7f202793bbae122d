import type { Db } from 'mongodb';
import { refKey, type KeyRef, type SealingKey } from '../../src/substrate/crypto/data-key-vault.js';
import { Collections } from '../../src/substrate/mongo/collections.js';

/** Where the keys `keysFor` made are: what a reader of the content they sealed asks the vault for. */
export const refsOf = (made: ReadonlyMap<string, SealingKey>): KeyRef[] =>
  [...made].map(([id, { page }]) => ({ id, page }));

/** The key `existing` found for the record whose key `keysFor` made. */
export const foundFor = (found: ReadonlyMap<string, Buffer>, made: ReadonlyMap<string, SealingKey>, id: string) =>
  found.get(refKey({ id, page: made.get(id)!.page }));

/**
 * The ids of the tenant's vault documents that name any of these records, in any form the vault stores (a key
 * document of the record's own, a page holding its key, an index entry): read raw, without the vault's code.
 */
export async function vaultDocsNaming(db: Db, tenant: string, ids: readonly string[]): Promise<string[]> {
  const docs = await db.collection<{ _id: string }>(Collections.dataKeys).find({ tenant }).toArray();
  return docs.filter((doc) => ids.some((id) => JSON.stringify(doc).includes(JSON.stringify(id)))).map((d) => d._id);
}
