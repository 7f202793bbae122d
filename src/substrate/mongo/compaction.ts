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
