import type { Db } from 'mongodb';

/**
 * Makes deletions physical in live data files: MongoDB's `compact` with `force: true` (on FerretDB a
 * PostgreSQL `VACUUM FULL`, which rewrites the table so dead tuples holding erased bytes are gone).
 */
export async function compactCollections(db: Db, names: readonly string[]): Promise<string[]> {
  const compacted: string[] = [];
  for (const name of names) {
    try {
      await db.command({ compact: name, force: true });
      compacted.push(name);
    } catch (error) {
      // A collection that does not exist yet has nothing to compact.
      if ((error as { codeName?: string }).codeName === 'NamespaceNotFound') continue;
      throw error;
    }
  }
  return compacted;
}

/** What backs the MongoDB wire protocol: it decides what a compaction proves. */
export type StorageBackend = 'postgresql' | 'wiredtiger';

/** FerretDB announces itself in `buildInfo` (`ferretdbVersion`); anything else is taken for MongoDB's WiredTiger. */
export async function storageBackendOf(db: Db): Promise<StorageBackend> {
  const info = await db.command({ buildInfo: 1 });
  return 'ferretdbVersion' in info ? 'postgresql' : 'wiredtiger';
}
