import type { Db } from 'mongodb';

/** Documents read per round trip while scanning a tenant's contents. */
const SCAN_BATCH = 500;

/**
 * Ids of a tenant's documents in `collection` whose `content` satisfies `matches`: one pass over the tenant, content
 * read in batches and never kept. For what no index can answer (a sentence repeated inside other text); the caller
 * decides what counts as a match.
 */
export async function idsWithContent(
  db: Db,
  collection: string,
  tenant: string,
  matches: (content: string) => boolean,
): Promise<string[]> {
  const found: string[] = [];
  const cursor = db
    .collection<{ _id: string; tenant: string; content?: unknown }>(collection)
    .find({ tenant }, { projection: { _id: 1, content: 1 }, batchSize: SCAN_BATCH });
  for await (const doc of cursor) {
    if (typeof doc.content === 'string' && matches(doc.content)) found.push(doc._id);
  }
  return found;
}
