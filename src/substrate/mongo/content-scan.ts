import type { Db } from 'mongodb';
import type { ContentCipher } from '../crypto/content-cipher.js';

/** Documents read per page while scanning a tenant's contents. */
const PAGE = 500;

/**
 * Ids of a tenant's documents in `collection` whose `content` satisfies `matches`: one pass over the tenant in pages
 * by id, content read and never kept. For what no index can answer (a sentence repeated inside other text); the
 * caller decides what counts as a match. Each page is a query of its own, exhausted in one batch: no cursor stays
 * open between pages, so the scan holds no long-lived snapshot on the server (under FerretDB a snapshot held open
 * would keep a concurrent `VACUUM FULL` from dropping another erasure's deleted rows).
 */
export async function idsWithContent(
  db: Db,
  cipher: ContentCipher,
  collection: string,
  tenant: string,
  matches: (content: string) => boolean,
): Promise<string[]> {
  const docs = db.collection<{ _id: string; tenant: string; content: string }>(collection);
  const found: string[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await docs
      .find(after === null ? { tenant } : { tenant, _id: { $gt: after } }, {
        projection: { _id: 1, tenant: 1, content: 1 },
        sort: { _id: 1 },
        limit: PAGE,
        batchSize: PAGE,
      })
      .toArray();
    // Sealed content is opened to be read; a record whose key is gone holds nothing readable to match.
    const readable = await cipher.openAll(page.filter((doc) => typeof doc.content === 'string'));
    for (const doc of readable) if (matches(doc.content)) found.push(doc._id);
    if (page.length < PAGE) return found;
    after = page[page.length - 1]!._id;
  }
}
