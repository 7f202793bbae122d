/**
 * The Elasticsearch adapter of the search index: one index per tenant behind an alias, hybrid BM25 + kNN
 * in one `_msearch` round trip fused in the client, deletion by ids with `_bulk` (the local node has no
 * `_delete_by_query`, painless or server-side RRF), and segment statistics for erasure verification.
 */
import type { Client, estypes } from '@elastic/elasticsearch';
import { MEMORY_STATUSES } from '../../shared/lifecycle.js';
import { validationError } from '../../shared/errors.js';
import { isZeroVector, vectorsOrNull, type Embedder } from './embedder.port.js';
import {
  indexEmbedderOf,
  isTenantIndexName,
  memoryIndexMapping,
  memoryIndexSettings,
  tenantIndexNames,
  toIndexDocument,
} from './index-layout.js';
import { reciprocalRankFusion } from './rrf.js';
import { admitsNothing, buildFilterClauses } from './search-filters.js';
import { SearchIndexError, esErrorType, guarded, isIndexNotFound, toSearchIndexError } from './search-index-error.js';
import {
  DEFAULT_PROBE_SIMILARITY,
  type IndexRole,
  type ItemFailure,
  type ReachedIndex,
  type SearchHit,
  type SearchIndex,
  type SegmentStats,
  type UpdateStatusResult,
} from './search-index.port.js';

/** How the adapter is built; `indexSettings` apply to indices it creates (tests shorten the lease sync). */
export interface ElasticsearchSearchIndexOptions {
  prefix: string;
  embedder: Embedder;
  indexSettings?: Record<string, unknown>;
  /** Documents per `_bulk` request. */
  bulkChunkSize?: number;
}

/** How long this process trusts what it learnt about a tenant's index (exists, holds its model). */
const CACHE_MS = 60_000;

function expiringSet(ttlMs: number) {
  const until = new Map<string, number>();
  return {
    has: (key: string) => (until.get(key) ?? 0) > Date.now(),
    add: (key: string) => void until.set(key, Date.now() + ttlMs),
    delete: (key: string) => void until.delete(key),
  };
}

/** Upper bound on `k`: each half of the query fetches a window of 2k candidates. */
export const MAX_K = 1000;
/** Ids a probe checks per request, and hits a text or vector probe reports at most. */
const PROBE_LIMIT = 1000;
/** A merge of a large index outlasts the client's default timeout; the caller retries anyway. */
const MERGE_TIMEOUT_MS = 10 * 60_000;

/**
 * Each ranked list is longer than k so that fusion can promote a document that is good in both lists
 * but first in neither (ES's own RRF calls this the rank window).
 */
export function rankWindow(k: number): number {
  return Math.max(2 * k, 20);
}

/** HNSW candidates per shard: recall grows with it; 5× the window, at least 50, at most ES's 10 000. */
export function numCandidates(window: number): number {
  return Math.min(10_000, Math.max(50, 5 * window));
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The single action of one `_bulk` response item. */
function bulkItem(
  item: Partial<Record<estypes.BulkOperationType, estypes.BulkResponseItem>>,
): estypes.BulkResponseItem {
  const result = Object.values(item)[0];
  if (result === undefined) throw new SearchIndexError('bulk', null, 'empty_bulk_item', true);
  return result;
}

function failureOf(item: estypes.BulkResponseItem, fallbackId: string): ItemFailure {
  return { id: item._id ?? fallbackId, status: item.status, type: item.error?.type ?? 'unknown' };
}

function hitIds(hits: estypes.SearchHit<unknown>[]): string[] {
  return hits.map((h) => h._id).filter((id): id is string => typeof id === 'string');
}

export function createElasticsearchSearchIndex(client: Client, options: ElasticsearchSearchIndexOptions): SearchIndex {
  const { prefix, embedder } = options;
  const chunkSize = options.bulkChunkSize ?? 500;
  // Tenants whose index this process has seen to exist (with its model), so that each upsert does not ask again.
  // Remembered for a minute only: a re-embedding run by another process may swap the index meanwhile.
  const ensured = expiringSet(CACHE_MS);
  const names = (tenant: string) => tenantIndexNames(prefix, tenant);

  // Tenants whose index holds vectors of this process's embedder. A mismatch is not cached: a re-embedding
  // swaps the alias to an index of the new model, and the next call must see it.
  const sameModel = expiringSet(CACHE_MS);
  const aliasExists = (alias: string): Promise<boolean> =>
    guarded('exists-alias', () => client.indices.existsAlias({ name: alias }));

  /**
   * Every concrete index of the tenant, live first: behind the live alias, behind the re-embedding's alias, and any
   * other index named as the tenant's (an orphan a failed re-embedding left behind). Erasure reaches them all, so
   * no copy outlives a purge while an orphan waits for the reconcile that deletes it.
   */
  async function erasureTargets(tenant: string): Promise<{ index: string; role: IndexRole }[]> {
    const { alias, next } = names(tenant);
    let response: Record<string, { aliases?: Record<string, unknown> }>;
    try {
      response = await client.indices.getAlias({
        index: `${alias},${alias}-v*,${alias}.e*`,
        ignore_unavailable: true,
        allow_no_indices: true,
      });
    } catch (error) {
      if (isIndexNotFound(error)) return [];
      throw toSearchIndexError('get-alias', error);
    }
    const rank: Record<IndexRole, number> = { live: 0, reembedding: 1, orphan: 2 };
    return Object.entries(response)
      .flatMap(([index, { aliases = {} }]): { index: string; role: IndexRole }[] => {
        if (alias in aliases) return [{ index, role: 'live' }];
        if (next in aliases) return [{ index, role: 'reembedding' }];
        // The wildcard also matches a tenant whose id extends this one's (`t-v2` for `t`): only exact names count.
        return isTenantIndexName(alias, index) ? [{ index, role: 'orphan' }] : [];
      })
      .sort((a, b) => rank[a.role] - rank[b.role] || a.index.localeCompare(b.index));
  }

  /** The embedder of the index behind the tenant's alias, or null when the tenant has no index yet. */
  async function indexEmbedder(tenant: string): Promise<string | null> {
    const { alias } = names(tenant);
    try {
      const response = await client.indices.getMapping({ index: alias });
      const mappings = Object.values(response).map((m) => indexEmbedderOf(m.mappings));
      return mappings[0] ?? null;
    } catch (error) {
      if (isIndexNotFound(error)) return null;
      throw toSearchIndexError('get-mapping', error);
    }
  }

  /** True when the tenant's vectors and this process's come from one model (or the tenant has no index). */
  async function matchesModel(tenant: string): Promise<boolean> {
    if (sameModel.has(tenant)) return true;
    const found = await indexEmbedder(tenant);
    if (found !== null && found !== embedder.model) return false;
    if (found !== null) sameModel.add(tenant);
    return true;
  }

  async function assertSameModel(tenant: string, operation: string): Promise<void> {
    if (await matchesModel(tenant)) return;
    // Retryable: while a re-embedding runs, writes and probes wait for its alias swap instead of failing for good.
    throw new SearchIndexError(
      operation,
      null,
      'embedder_mismatch',
      true,
      `the tenant's index holds vectors of another model than ${embedder.model}: re-embed the tenant`,
    );
  }

  /**
   * Where an upsert goes: the live alias, or, while a re-embedding to this process's model fills the tenant's
   * `next` index, that index (the swap makes it live; the old model's index could not take this vector).
   */
  async function writeTarget(tenant: string): Promise<string> {
    const { alias, next } = names(tenant);
    if (ensured.has(tenant)) return alias;
    try {
      await ensureTenantIndex(tenant);
      return alias;
    } catch (error) {
      if (!(error instanceof SearchIndexError) || error.esType !== 'embedder_mismatch') throw error;
      const filling = await client.indices.getMapping({ index: next }).catch(() => null);
      const models = filling ? Object.values(filling).map((m) => indexEmbedderOf(m.mappings)) : [];
      if (models.length === 1 && models[0] === embedder.model) return next;
      throw error;
    }
  }

  async function ensureTenantIndex(tenant: string): Promise<void> {
    const { alias, index } = names(tenant);
    if (await aliasExists(alias)) {
      await assertSameModel(tenant, 'ensure-index');
      // Indices created before documents carried their content hash (and its key id) take the fields now (adding a
      // field is idempotent); their older documents are found by the text probes only.
      await guarded('ensure-index', () =>
        client.indices.putMapping({
          index: alias,
          properties: { contentHash: { type: 'keyword' }, hashKeyId: { type: 'keyword' } },
        }),
      );
      ensured.add(tenant);
      return;
    }
    try {
      await client.indices.create({
        index,
        aliases: { [alias]: { is_write_index: true } },
        settings: memoryIndexSettings(options.indexSettings),
        mappings: memoryIndexMapping(embedder.dims, embedder.model),
      });
    } catch (error) {
      // A concurrent creator won the race: wait until its index can take writes.
      if (esErrorType(error) !== 'resource_already_exists_exception') throw toSearchIndexError('create-index', error);
      await guarded('create-index', () => client.cluster.health({ index, wait_for_status: 'yellow', timeout: '30s' }));
      if (!(await aliasExists(alias))) throw new SearchIndexError('create-index', null, 'index_without_alias', false);
    }
    ensured.add(tenant);
  }

  const embedOrNull = (texts: string[]) => vectorsOrNull(embedder, texts);

  async function refresh(alias: string, operation: string): Promise<void> {
    await guarded(operation, () => client.indices.refresh({ index: alias }));
  }

  return {
    ensureTenantIndex,

    async upsert(tenant, records, { refresh: refreshMode = false } = {}) {
      if (records.some((r) => r.tenant !== tenant))
        throw validationError('records', 'a record belongs to another tenant');
      if (records.length === 0) return { indexed: 0, failed: [] };
      const target = await writeTarget(tenant);
      let indexed = 0;
      const failed: ItemFailure[] = [];
      const batches = chunks(records, chunkSize);
      for (const [n, batch] of batches.entries()) {
        const vectors = await embedOrNull(batch.map((r) => r.content));
        const operations = batch.flatMap((record, i) => [
          { index: { _id: record._id } },
          toIndexDocument(record, vectors[i] ?? null),
        ]);
        const response = await guarded('upsert', () =>
          client.bulk({
            index: target,
            operations,
            // The alias must exist: a write must never auto-create an index with a dynamic mapping.
            require_alias: true,
            // One refresh covers the whole index, so only the last batch asks for it.
            refresh: n === batches.length - 1 ? refreshMode : false,
          }),
        );
        response.items.forEach((raw, i) => {
          const item = bulkItem(raw);
          if (item.error === undefined && item.status < 300) indexed++;
          else failed.push(failureOf(item, batch[i]?._id ?? ''));
        });
      }
      // The index vanished under us (dropped elsewhere): the next upsert must create it again.
      if (failed.some((f) => f.type === 'index_not_found_exception')) ensured.delete(tenant);
      return { indexed, failed };
    },

    async updateStatus(tenant, ids, status, { refresh: refreshMode = false } = {}) {
      const { alias, next } = names(tenant);
      if (!MEMORY_STATUSES.includes(status)) throw validationError('status', 'is not a memory status');
      const result: UpdateStatusResult = { updated: 0, notFound: 0, failed: [] };
      const unique = [...new Set(ids)];
      const batches = chunks(unique, chunkSize);
      // A re-embedding's copy takes the move as well; its counts are not the caller's (the live alias answers).
      if (unique.length > 0 && (await aliasExists(next))) {
        for (const batch of batches) {
          const operations = batch.flatMap((id) => [{ update: { _id: id } }, { doc: { status } }]);
          const response = await guarded('update-status', () =>
            client.bulk({ index: next, operations, require_alias: true, refresh: refreshMode }),
          );
          const failure = response.items
            .map(bulkItem)
            .find((i) => i.error && i.error.type !== 'document_missing_exception');
          if (failure)
            throw new SearchIndexError('update-status', failure.status, failure.error?.type ?? 'unknown', true);
        }
      }
      for (const [n, batch] of batches.entries()) {
        const operations = batch.flatMap((id) => [{ update: { _id: id, retry_on_conflict: 3 } }, { doc: { status } }]);
        const response = await guarded('update-status', () =>
          client.bulk({
            index: alias,
            operations,
            require_alias: true,
            refresh: n === batches.length - 1 ? refreshMode : false,
          }),
        );
        response.items.forEach((raw, i) => {
          const item = bulkItem(raw);
          const type = item.error?.type;
          if (type === undefined && item.status < 300) result.updated++;
          else if (type === 'document_missing_exception' || type === 'index_not_found_exception') result.notFound++;
          else result.failed.push(failureOf(item, batch[i] ?? ''));
        });
      }
      return result;
    },

    async search(tenant, query) {
      const { alias } = names(tenant);
      const { k, text, filters } = query;
      if (!Number.isInteger(k) || k < 1 || k > MAX_K) throw validationError('k', `must be an integer in [1, ${MAX_K}]`);
      if (admitsNothing(filters) || text.trim() === '') return [];
      const filter = buildFilterClauses(tenant, filters);
      const window = rankWindow(k);
      // While the tenant is being re-embedded to another model, search answers from BM25 alone.
      const [vector] = (await matchesModel(tenant)) ? await embedOrNull([text]) : [null];
      const common = { size: window, _source: false, track_total_hits: false } as const;
      const searches: estypes.MsearchRequestItem[] = [
        { index: alias },
        { ...common, query: { bool: { must: [{ match: { content: text } }], filter } } },
      ];
      if (vector) {
        searches.push(
          { index: alias },
          {
            ...common,
            knn: { field: 'embedding', query_vector: vector, k: window, num_candidates: numCandidates(window), filter },
          },
        );
      }
      const response = await guarded('search', () => client.msearch({ searches }));
      const lists = response.responses.map((r) => {
        if ('error' in r) {
          // No index yet means no memories yet.
          if (r.error.type === 'index_not_found_exception') return [];
          throw new SearchIndexError('search', r.status, r.error.type, r.status === 429 || r.status >= 500);
        }
        return hitIds(r.hits.hits);
      });
      return reciprocalRankFusion(lists, { limit: k }).map((item): SearchHit => {
        const hit: SearchHit = { id: item.id, score: item.score };
        const [bm25Rank, knnRank] = item.ranks;
        if (bm25Rank !== undefined) hit.bm25Rank = bm25Rank;
        if (knnRank !== undefined) hit.knnRank = knnRank;
        return hit;
      });
    },

    async purge(tenant, ids) {
      const unique = [...new Set(ids)];
      if (unique.length === 0) return { deleted: 0, notFound: 0, indices: [] };
      const targets = await erasureTargets(tenant);
      if (targets.length === 0) return { deleted: 0, notFound: unique.length, indices: [] };
      let deleted = 0;
      let notFound = 0;
      const failed: ItemFailure[] = [];
      const reached: ReachedIndex[] = [];
      for (const [n, { index: target, role }] of targets.entries()) {
        let removed = 0;
        for (const batch of chunks(unique, 1000)) {
          const response = await guarded('purge', () =>
            client.bulk({ index: target, operations: batch.map((id) => ({ delete: { _id: id } })) }),
          );
          response.items.forEach((raw, i) => {
            const item = bulkItem(raw);
            // The counts are the live index's; a copy (a re-embedding's, an orphan) only has to lose the documents too.
            const counted = n === 0;
            if (item.result === 'deleted') {
              removed++;
              deleted += counted ? 1 : 0;
            } else if (item.result === 'not_found' || item.error?.type === 'index_not_found_exception')
              notFound += counted ? 1 : 0;
            else failed.push(failureOf(item, batch[i] ?? ''));
          });
        }
        // Searches must stop seeing the documents now, not at the next periodic refresh. A call that found nothing
        // to delete changed nothing a search could see (the purge after the marking, usually) and needs none; a
        // call with failed items refreshes anyway, so that what it did delete is unseen before its retry.
        if (removed > 0 || failed.length > 0) await refresh(target, 'purge');
        reached.push({ index: target, role, deleted: removed });
      }
      const first = failed[0];
      if (first !== undefined) {
        // Deletes are idempotent: a retry of the whole call finishes the job.
        throw new SearchIndexError(
          'purge',
          first.status,
          first.type,
          true,
          `${failed.length} of ${unique.length} failed`,
        );
      }
      return { deleted, notFound, indices: reached };
    },

    async expungeDeleted(tenant) {
      const targets = await erasureTargets(tenant);
      if (targets.length === 0) return { deletedDocs: 0, segments: 0, indices: [] };
      const index = targets.map((t) => t.index).join(',');
      await refresh(index, 'expunge');
      // Also set at creation; repeated for indices created before it was.
      await guarded('expunge', () =>
        client.indices.putSettings({ index, settings: { 'index.merge.policy.expunge_deletes_allowed': 0 } }),
      );
      await guarded('expunge', () =>
        client.indices.forcemerge({ index, only_expunge_deletes: true }, { requestTimeout: MERGE_TIMEOUT_MS }),
      );
      await refresh(index, 'expunge');
      await guarded('expunge', () => client.indices.flush({ index, wait_if_ongoing: true }));
      return segmentsOf(targets, await guarded('segments', () => client.indices.segments({ index })));
    },

    async segmentStats(tenant) {
      const targets = await erasureTargets(tenant);
      if (targets.length === 0) return { deletedDocs: 0, segments: 0, indices: [] };
      const index = targets.map((t) => t.index).join(',');
      return segmentsOf(targets, await guarded('segments', () => client.indices.segments({ index })));
    },

    async orphans(tenant) {
      return (await erasureTargets(tenant)).filter((t) => t.role === 'orphan').map((t) => t.index);
    },

    async dropOrphans(tenant) {
      const orphans = (await erasureTargets(tenant)).filter((t) => t.role === 'orphan').map((t) => t.index);
      if (orphans.length === 0) return [];
      await guarded('drop-orphans', () => client.indices.delete({ index: orphans, ignore_unavailable: true }));
      return orphans;
    },

    async indexOf(tenant) {
      const { alias } = names(tenant);
      if (!(await aliasExists(alias))) return null;
      const response = await guarded('index-of', () => client.indices.getAlias({ name: alias }));
      return Object.keys(response).sort()[0] ?? null;
    },

    async probe(tenant, request) {
      const ranOn = { id: [], text: [], vector: [], subject: [] };
      const empty = { found: [], byId: [], byText: [], byVector: [], bySubject: [], byContentHash: [], ranOn };
      const reached = await erasureTargets(tenant);
      if (reached.length === 0) return empty;
      const targets = reached.map((t) => t.index);
      const everywhere = targets.join(',');
      const live = reached.find((t) => t.role === 'live')?.index;
      const filling = reached.find((t) => t.role === 'reembedding')?.index;
      // Vectors compare only within one model: the live index when it is this process's model, else the copy
      // being filled with it (which is this process's by construction); no such index means wait for the swap.
      const vectorTarget = (await matchesModel(tenant)) && live ? live : (filling ?? null);
      if (request.vector && vectorTarget === null) await assertSameModel(tenant, 'probe');
      // A probe must see every write so far, not only what the last periodic refresh published.
      await refresh(everywhere, 'probe');
      const tenantFilter: estypes.QueryDslQueryContainer = { term: { tenant } };

      const byId: string[] = [];
      for (const batch of chunks([...new Set(request.ids ?? [])], PROBE_LIMIT)) {
        // mget is real-time: it sees a document even before a refresh would make it searchable.
        for (const target of targets) {
          const response = await guarded('probe', () =>
            client.mget<{ tenant?: string }>({ index: target, ids: batch, _source_includes: ['tenant'] }),
          );
          for (const doc of response.docs) {
            if ('found' in doc && doc.found && doc._source?.tenant === tenant) byId.push(doc._id);
          }
        }
      }

      const byText: string[] = [];
      const phrases = [request.text, ...(request.texts ?? [])].filter(
        (t): t is string => t !== undefined && t.trim() !== '',
      );
      // Any of the phrases, one query for all of them; a query that fills its page is split, so no hit is left out.
      const phraseHits = async (batch: string[]): Promise<void> => {
        const response = await guarded('probe', () =>
          client.search({
            index: everywhere,
            size: PROBE_LIMIT,
            _source: false,
            query: {
              bool: {
                should: batch.map((phrase) => ({ match_phrase: { content: phrase } })),
                minimum_should_match: 1,
                filter: [tenantFilter],
              },
            },
          }),
        );
        const hits = hitIds(response.hits.hits);
        if (hits.length < PROBE_LIMIT || batch.length === 1) {
          byText.push(...hits);
          return;
        }
        const half = Math.ceil(batch.length / 2);
        await phraseHits(batch.slice(0, half));
        await phraseHits(batch.slice(half));
      };
      if (phrases.length > 0) await phraseHits(phrases);

      const byVector: string[] = [];
      const vector = request.vector;
      if (vector !== undefined && !isZeroVector(vector) && vectorTarget !== null) {
        if (vector.length !== embedder.dims) throw validationError('vector', `must have ${embedder.dims} dimensions`);
        const response = await guarded('probe', () =>
          client.search({
            index: vectorTarget,
            size: PROBE_LIMIT,
            _source: false,
            knn: {
              field: 'embedding',
              query_vector: vector,
              k: PROBE_LIMIT,
              num_candidates: numCandidates(PROBE_LIMIT),
              similarity: request.similarity ?? DEFAULT_PROBE_SIMILARITY,
              filter: [tenantFilter],
            },
          }),
        );
        byVector.push(...hitIds(response.hits.hits));
      }

      const bySubject: string[] = [];
      const subjects = [...new Set(request.subjects ?? [])];
      if (subjects.length > 0) {
        const response = await guarded('probe', () =>
          client.search({
            index: everywhere,
            size: PROBE_LIMIT,
            _source: false,
            query: { bool: { filter: [tenantFilter, { terms: { subjects } }] } },
          }),
        );
        bySubject.push(...hitIds(response.hits.hits));
      }

      const byContentHash: string[] = [];
      for (const batch of chunks([...new Set(request.contentHashes ?? [])], PROBE_LIMIT)) {
        const response = await guarded('probe', () =>
          client.search({
            index: everywhere,
            size: PROBE_LIMIT,
            _source: false,
            query: { bool: { filter: [tenantFilter, { terms: { contentHash: batch } }] } },
          }),
        );
        byContentHash.push(...hitIds(response.hits.hits));
      }

      const unique = (ids: string[]) => [...new Set(ids)];
      const found = unique([...byId, ...byText, ...byVector, ...bySubject, ...byContentHash]);
      return {
        found,
        byId: unique(byId),
        byText: unique(byText),
        byVector,
        bySubject: unique(bySubject),
        byContentHash: unique(byContentHash),
        ranOn: {
          id: request.ids?.length ? targets : [],
          text: phrases.length > 0 ? targets : [],
          vector: vector !== undefined && !isZeroVector(vector) && vectorTarget !== null ? [vectorTarget] : [],
          subject: subjects.length > 0 ? targets : [],
        },
      };
    },

    async dropTenant(tenant) {
      const { index } = names(tenant);
      const targets = new Set([index, ...(await erasureTargets(tenant)).map((t) => t.index)]);
      try {
        await client.indices.delete({ index: [...targets], ignore_unavailable: true });
      } catch (error) {
        if (!isIndexNotFound(error)) throw toSearchIndexError('drop-tenant', error);
      }
      ensured.delete(tenant);
      sameModel.delete(tenant);
    },
  };
}

/** Segments and deleted documents over every shard copy of an `_segments` answer, and deleted documents per index. Pure. */
export function countSegments(response: estypes.IndicesSegmentsResponse): {
  deletedDocs: number;
  segments: number;
  byIndex: Record<string, number>;
} {
  let deletedDocs = 0;
  let segments = 0;
  const byIndex: Record<string, number> = {};
  for (const [index, indexSegments] of Object.entries(response.indices)) {
    byIndex[index] = 0;
    for (const copies of Object.values(indexSegments.shards)) {
      for (const copy of Array.isArray(copies) ? copies : [copies]) {
        for (const segment of Object.values(copy.segments)) {
          segments++;
          deletedDocs += segment.deleted_docs;
          byIndex[index] += segment.deleted_docs;
        }
      }
    }
  }
  return { deletedDocs, segments, byIndex };
}

/** Segment statistics of the reached indices, each with its role. */
function segmentsOf(
  targets: readonly { index: string; role: IndexRole }[],
  response: estypes.IndicesSegmentsResponse,
): SegmentStats {
  const { deletedDocs, segments, byIndex } = countSegments(response);
  return {
    deletedDocs,
    segments,
    indices: targets.map((t) => ({ index: t.index, role: t.role, deletedDocs: byIndex[t.index] ?? 0 })),
  };
}
