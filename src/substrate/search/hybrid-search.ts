/**
 * The hybrid query of a tenant's index: BM25 and kNN under the same filters in one `_msearch` round trip, fused
 * in the client with reciprocal rank fusion (the local node has no server-side RRF), and the sizes of each half.
 */
import type { estypes } from '@elastic/elasticsearch';
import { validationError } from '../../shared/errors.js';
import { vectorsOrNull } from './embedder.port.js';
import { reciprocalRankFusion } from './rrf.js';
import { admitsNothing, buildFilterClauses } from './search-filters.js';
import { hitIds, type SearchIndexContext } from './search-index-context.js';
import { SearchIndexError, guarded } from './search-index-error.js';
import type { HybridQuery, SearchHit } from './search-index.port.js';
import { matchesModel } from './tenant-index.js';

/** Upper bound on `k`: each half of the query fetches a window of 2k candidates. */
export const MAX_K = 1000;

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

export async function searchHybrid(ctx: SearchIndexContext, tenant: string, query: HybridQuery): Promise<SearchHit[]> {
  return (await searchHybridMany(ctx, tenant, [query]))[0]!;
}

/** Hybrid queries sent in one `_msearch`: a BM25 and a kNN search each. */
const QUERIES_PER_MSEARCH = 32;

/**
 * Many hybrid queries of one tenant: their texts embedded in one call and their searches sent together, a
 * `_msearch` per 32 queries. Each answer is exactly what `searchHybrid` gives for that query alone.
 */
export async function searchHybridMany(
  ctx: SearchIndexContext,
  tenant: string,
  queries: readonly HybridQuery[],
): Promise<SearchHit[][]> {
  for (const { k } of queries)
    if (!Number.isInteger(k) || k < 1 || k > MAX_K) throw validationError('k', `must be an integer in [1, ${MAX_K}]`);
  const answers: SearchHit[][] = queries.map(() => []);
  const asked = queries.flatMap((q, at) => (admitsNothing(q.filters) || q.text.trim() === '' ? [] : [at]));
  if (asked.length === 0) return answers;
  // While the tenant is being re-embedded to another model, search answers from BM25 alone.
  const vectors = (await matchesModel(ctx, tenant))
    ? await vectorsOrNull(
        ctx.embedder,
        asked.map((at) => queries[at]!.text),
      )
    : asked.map(() => null);
  for (let from = 0; from < asked.length; from += QUERIES_PER_MSEARCH) {
    const chunk = asked.slice(from, from + QUERIES_PER_MSEARCH);
    const searches = chunk.flatMap((at, i) => searchesOf(ctx, tenant, queries[at]!, vectors[from + i]!));
    const response = await guarded('search', () => ctx.client.msearch({ searches }));
    let next = 0;
    for (const [i, at] of chunk.entries()) {
      const halves = vectors[from + i] ? 2 : 1;
      const lists = response.responses.slice(next, next + halves).map(hitsOf);
      next += halves;
      answers[at] = fuse(lists, queries[at]!.k);
    }
  }
  return answers;
}

/** The BM25 search and (with a vector) the kNN search of one query, under the same filters. */
function searchesOf(
  ctx: SearchIndexContext,
  tenant: string,
  query: HybridQuery,
  vector: number[] | null,
): estypes.MsearchRequestItem[] {
  const { alias } = ctx.names(tenant);
  const filter = buildFilterClauses(tenant, query.filters);
  const window = rankWindow(query.k);
  const common = { size: window, _source: false, track_total_hits: false } as const;
  const searches: estypes.MsearchRequestItem[] = [
    { index: alias },
    { ...common, query: { bool: { must: [{ match: { content: query.text } }], filter } } },
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
  return searches;
}

function hitsOf(r: estypes.MsearchResponseItem): string[] {
  if ('error' in r) {
    // No index yet means no memories yet.
    if (r.error.type === 'index_not_found_exception') return [];
    throw new SearchIndexError('search', r.status, r.error.type, r.status === 429 || r.status >= 500);
  }
  return hitIds(r.hits.hits);
}

function fuse(lists: string[][], k: number): SearchHit[] {
  return reciprocalRankFusion(lists, { limit: k }).map((item): SearchHit => {
    const hit: SearchHit = { id: item.id, score: item.score };
    const [bm25Rank, knnRank] = item.ranks;
    if (bm25Rank !== undefined) hit.bm25Rank = bm25Rank;
    if (knnRank !== undefined) hit.knnRank = knnRank;
    return hit;
  });
}
