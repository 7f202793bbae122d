/**
 * Every document a tenant's live alias holds under some filters, paged in id order: the whole set any hybrid query
 * under those filters could return (BM25 and kNN both choose among the documents the filters admit), whatever its
 * text or rank. An erasure's verification reads it to check what the governed search could serve.
 */
import type { estypes } from '@elastic/elasticsearch';
import { validationError } from '../../shared/errors.js';
import { admitsNothing, buildFilterClauses } from './search-filters.js';
import { hitIds, type SearchIndexContext } from './search-index-context.js';
import { SearchIndexError, guarded, isIndexNotFound } from './search-index-error.js';
import type { SearchFilters } from './search-index.port.js';

/** Ids a page holds unless asked otherwise: one search answers it, ids only. */
export const LISTING_PAGE = 1_000;

export async function* idsUnder(
  ctx: SearchIndexContext,
  tenant: string,
  filters: SearchFilters,
  options: { pageSize?: number } = {},
): AsyncGenerator<string[]> {
  const size = options.pageSize ?? LISTING_PAGE;
  if (!Number.isInteger(size) || size < 1 || size > 10_000)
    throw validationError('pageSize', 'must be an integer in [1, 10000]');
  if (admitsNothing(filters)) return;
  const { alias } = ctx.names(tenant);
  const filter = buildFilterClauses(tenant, filters);
  let after: estypes.SortResults | undefined;
  for (;;) {
    // search_after on the id keyword rather than a point in time: a page is a plain search, and a document written
    // between pages is listed if its id sorts after the cursor (the caller checks what it reads, not what it missed).
    const response = await guarded('list', () =>
      ctx.client
        .search({
          index: alias,
          size,
          _source: false,
          track_total_hits: false,
          query: { bool: { filter } },
          sort: [{ memoryId: 'asc' }],
          ...(after ? { search_after: after } : {}),
        })
        // No index yet means no documents yet.
        .catch((error: unknown) => {
          if (isIndexNotFound(error)) return null;
          throw error;
        }),
    );
    if (response === null) return;
    const hits = response.hits.hits;
    if (hits.length > 0) yield hitIds(hits);
    if (hits.length < size) return;
    after = hits[hits.length - 1]!.sort;
    if (!after) throw new SearchIndexError('list', null, 'missing_sort_values', false);
  }
}
