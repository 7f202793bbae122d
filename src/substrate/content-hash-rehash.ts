import type { Client as ElasticsearchClient } from '@elastic/elasticsearch';
import type { Db, Document } from 'mongodb';
import type { TenantMacs } from './fingerprint.js';
import { keyedDigest, keyedIdempotencyKey } from './content-hash.js';
import { Collections, mapBounded } from './mongo/collections.js';
import { tenantIndexNames } from './search/index-layout.js';

export interface RehashDeps {
  db: Db;
  es: ElasticsearchClient;
  indexPrefix: string;
  macs: TenantMacs;
  /** Only this tenant's rows and documents (absent: every tenant's). */
  tenant?: string;
}

/** Rows and documents re-keyed, per store: counts only. */
export type RehashCounts = Record<string, number>;

/** Rows updated at once, and index documents read per round. */
const CONCURRENCY = 16;
const ES_PAGE = 500;
/** A row written before hashes were keyed has no key id. */
const LEGACY = { hashKeyId: { $exists: false } };

/**
 * Re-keys every content hash written before hashes were keyed: each row without a key id holds the plain SHA-256,
 * and its keyed form is the HMAC of that digest under the tenant's current key (`content-hash.ts`), so no sealed
 * content is opened. Idempotent: a row is rewritten only while it still holds the plain form it was read with (a
 * concurrent write or a second run finds nothing to do), and a second run counts zero.
 *
 * Until it has run, every lookup by hash also matches the plain form, so nothing is missed meanwhile. Tombstones
 * are not touched: they are keyed fingerprints already, and a check looks for every form they may have been made of.
 */
export async function rehashContentHashes(
  deps: RehashDeps,
  onProgress?: (store: string, done: number) => void,
): Promise<RehashCounts> {
  const { db, macs } = deps;
  const keyId = macs.keyId;
  const scope = deps.tenant !== undefined ? { tenant: deps.tenant } : {};
  /** Rewrites each legacy row of `collection` to what `keyed` makes of it, only while it is still as it was read. */
  const rehash = async (
    collection: string,
    filter: Document,
    projection: Document,
    keyed: (doc: Document) => Document,
  ): Promise<number> => {
    const rows = db.collection(collection);
    let done = 0;
    let batch: Document[] = [];
    const flush = async () => {
      const results = await mapBounded(batch, CONCURRENCY, (doc) =>
        rows.updateOne(
          { _id: doc._id, ...LEGACY, contentHash: doc.contentHash },
          { $set: { ...keyed(doc), hashKeyId: keyId } },
        ),
      );
      done += results.reduce((n, r) => n + r.modifiedCount, 0);
      onProgress?.(collection, done);
      batch = [];
    };
    for await (const doc of rows.find(
      { ...scope, ...filter, ...LEGACY },
      { projection: { _id: 1, tenant: 1, ...projection } },
    )) {
      batch.push(doc);
      if (batch.length >= 500) await flush();
    }
    if (batch.length > 0) await flush();
    return done;
  };
  const contentHashOnly = (doc: Document) => ({
    contentHash: keyedDigest(macs, doc.tenant as string, doc.contentHash as string),
  });
  const counts: RehashCounts = {};
  counts[Collections.memories] = await rehash(Collections.memories, {}, { contentHash: 1 }, contentHashOnly);
  counts[Collections.events] = await rehash(Collections.events, {}, { contentHash: 1, idempotencyKey: 1 }, (doc) => ({
    ...contentHashOnly(doc),
    idempotencyKey: keyedIdempotencyKey(macs, doc.tenant as string, doc.idempotencyKey as string),
  }));
  counts[Collections.rectifications] = await rehash(
    Collections.rectifications,
    {},
    { contentHash: 1 },
    contentHashOnly,
  );
  counts[Collections.erasureProbes] = await rehashProbes(db, macs, scope);
  counts.elasticsearch = await rehashIndexDocuments(deps);
  return counts;
}

/** Probe documents keep a list of hashes (their sentence batches hold none and are left alone). */
async function rehashProbes(db: Db, macs: TenantMacs, scope: { tenant?: string }): Promise<number> {
  const probes = db.collection(Collections.erasureProbes);
  let done = 0;
  const legacy = { contentHashes: { $exists: true }, ...LEGACY };
  for await (const doc of probes.find(
    { ...scope, ...legacy },
    { projection: { _id: 1, tenant: 1, contentHashes: 1 } },
  )) {
    const tenant = doc.tenant as string;
    const keyed = (doc.contentHashes as string[]).map((h) => keyedDigest(macs, tenant, h));
    const result = await probes.updateOne(
      { _id: doc._id, ...legacy, contentHashes: doc.contentHashes as string[] },
      { $set: { contentHashes: keyed, hashKeyId: macs.keyId } },
    );
    done += result.modifiedCount;
  }
  return done;
}

/**
 * Index documents without a key id, across every tenant's indices (live, re-embedding, left over): their content
 * hash keyed here (a script in the index cannot make an HMAC), each written only if the document is unchanged since
 * it was read. Rounds until one finds nothing it could re-key.
 */
async function rehashIndexDocuments(deps: RehashDeps): Promise<number> {
  const { es, macs, tenant } = deps;
  // The tenant's own indices share its alias as a prefix (a longer tenant id too: the query keeps to the tenant).
  const pattern =
    tenant !== undefined ? `${tenantIndexNames(deps.indexPrefix, tenant).alias}*` : `${deps.indexPrefix}-mem-*`;
  // Indices made before documents carried a key id take the field first (their mapping is strict).
  await es.indices.putMapping({
    index: pattern,
    allow_no_indices: true,
    properties: { contentHash: { type: 'keyword' }, hashKeyId: { type: 'keyword' } },
  });
  let done = 0;
  for (;;) {
    const page = await es.search<{ tenant: string; contentHash: string }>({
      index: pattern,
      allow_no_indices: true,
      size: ES_PAGE,
      seq_no_primary_term: true,
      _source: ['tenant', 'contentHash'],
      query: {
        bool: {
          filter: [{ exists: { field: 'contentHash' } }, ...(tenant !== undefined ? [{ term: { tenant } }] : [])],
          must_not: [{ exists: { field: 'hashKeyId' } }],
        },
      },
    });
    const hits = page.hits.hits.filter((h) => h._source);
    if (hits.length === 0) return done;
    const operations = hits.flatMap((h) => [
      { update: { _index: h._index, _id: h._id!, if_seq_no: h._seq_no!, if_primary_term: h._primary_term! } },
      { doc: { contentHash: keyedDigest(macs, h._source!.tenant, h._source!.contentHash), hashKeyId: macs.keyId } },
    ]);
    const result = await es.bulk({ operations, refresh: 'wait_for' });
    const updated = result.items.filter((i) => i.update?.status === 200).length;
    done += updated;
    // A document changed since it was read (a concurrent re-index) is read again next round; a round that re-keys
    // nothing ends, so a document that keeps failing cannot hold the command forever.
    if (updated === 0) return done;
  }
}
