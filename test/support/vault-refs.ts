import { refKey, type KeyRef, type SealingKey } from '../../src/substrate/crypto/data-key-vault.js';

/** Where the keys `keysFor` made are: what a reader of the content they sealed asks the vault for. */
export const refsOf = (made: ReadonlyMap<string, SealingKey>): KeyRef[] =>
  [...made].map(([id, { page }]) => ({ id, page }));

/** The key `existing` found for the record whose key `keysFor` made. */
export const foundFor = (found: ReadonlyMap<string, Buffer>, made: ReadonlyMap<string, SealingKey>, id: string) =>
  found.get(refKey({ id, page: made.get(id)!.page }));
