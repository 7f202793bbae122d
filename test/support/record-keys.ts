import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { keyContext, keyKindOf } from '../../src/substrate/crypto/data-key-vault.js';
import { DATA_KEY_BYTES } from '../../src/substrate/crypto/content-seal.js';
import type { KeyEncryptionKeys } from '../../src/substrate/crypto/key-encryption-keys.port.js';
import { Collections } from '../../src/substrate/mongo/collections.js';

/**
 * Stores data keys as the vault wrote them before pages: one document per record, its id the record's (with the
 * record's kind, unless `withKind` is false, as before kinds were recorded). Returns the keys, by record id.
 */
export async function storeRecordKeys(
  db: Db,
  keks: KeyEncryptionKeys,
  tenant: string,
  ids: readonly string[],
  options: { withKind?: (id: string) => boolean } = {},
): Promise<Map<string, Buffer>> {
  const made = new Map<string, Buffer>();
  const docs = await Promise.all(
    ids.map(async (id) => {
      const key = randomBytes(DATA_KEY_BYTES);
      made.set(id, key);
      const { epoch, wrapped } = await keks.wrap(key, keyContext(tenant, id));
      const kind = (options.withKind ?? (() => true))(id) ? { kind: keyKindOf(id) } : {};
      return { _id: id, tenant, ...kind, epoch, wrapped, createdAt: new Date() };
    }),
  );
  for (let i = 0; i < docs.length; i += 500) {
    await db.collection<{ _id: string }>(Collections.dataKeys).insertMany(docs.slice(i, i + 500));
  }
  return made;
}
