/**
 * The Elasticsearch adapter of the search index: one index per tenant behind an alias, hybrid BM25 + kNN
 * in one `_msearch` round trip fused in the client, deletion by ids with `_bulk` (the local node has no
 * `_delete_by_query`, painless or server-side RRF), and segment statistics for erasure verification.
 * This file builds the context the parts share and composes them into the port.
 */
import type { Client } from '@elastic/elasticsearch';
import type { Embedder } from './embedder.port.js';
import { searchHybrid, searchHybridMany } from './hybrid-search.js';
import { dropOrphans, dropTenant, expungeDeleted, orphanIndices, purge, segmentStats } from './index-deletion.js';
import { tenantIndexNames } from './index-layout.js';
import { idsUnder } from './index-listing.js';
import { probe } from './index-probe.js';
import { updateStatus, upsertRecords } from './index-writes.js';
import { CACHE_MS, expiringSet, type SearchIndexContext } from './search-index-context.js';
import type { SearchIndex } from './search-index.port.js';
import { ensureTenantIndex, indexOf } from './tenant-index.js';

export { MAX_K, numCandidates, rankWindow } from './hybrid-search.js';
export { countSegments } from './index-deletion.js';

/** How the adapter is built; `indexSettings` apply to indices it creates (tests shorten the lease sync). */
export interface ElasticsearchSearchIndexOptions {
  prefix: string;
  embedder: Embedder;
  indexSettings?: Record<string, unknown>;
  /** Documents per `_bulk` request. */
  bulkChunkSize?: number;
}

export function createElasticsearchSearchIndex(client: Client, options: ElasticsearchSearchIndexOptions): SearchIndex {
  const { prefix, embedder } = options;
  const ctx: SearchIndexContext = {
    client,
    embedder,
    indexSettings: options.indexSettings,
    chunkSize: options.bulkChunkSize ?? 500,
    names: (tenant: string) => tenantIndexNames(prefix, tenant),
    // Tenants whose index this process has seen to exist (with its model), so that each upsert does not ask again.
    // Remembered for a minute only: a re-embedding run by another process may swap the index meanwhile.
    ensured: expiringSet(CACHE_MS),
    // Tenants whose index holds vectors of this process's embedder. A mismatch is not cached: a re-embedding
    // swaps the alias to an index of the new model, and the next call must see it.
    sameModel: expiringSet(CACHE_MS),
  };

  return {
    ensureTenantIndex: (tenant) => ensureTenantIndex(ctx, tenant),
    upsert: (tenant, records, writeOptions) => upsertRecords(ctx, tenant, records, writeOptions),
    updateStatus: (tenant, ids, status, writeOptions) => updateStatus(ctx, tenant, ids, status, writeOptions),
    search: (tenant, query) => searchHybrid(ctx, tenant, query),
    searchMany: (tenant, queries) => searchHybridMany(ctx, tenant, queries),
    idsUnder: (tenant, filters, listOptions) => idsUnder(ctx, tenant, filters, listOptions),
    purge: (tenant, ids) => purge(ctx, tenant, ids),
    expungeDeleted: (tenant) => expungeDeleted(ctx, tenant),
    segmentStats: (tenant) => segmentStats(ctx, tenant),
    orphans: (tenant) => orphanIndices(ctx, tenant),
    dropOrphans: (tenant) => dropOrphans(ctx, tenant),
    indexOf: (tenant) => indexOf(ctx, tenant),
    probe: (tenant, request) => probe(ctx, tenant, request),
    dropTenant: (tenant) => dropTenant(ctx, tenant),
  };
}
