/**
 * Re-embedding a tenant's index with another model, without a moment where search, writes or erasure lose
 * sight of a document: a new concrete index (this process's embedder) is filled behind the tenant's `next`
 * alias while the live alias keeps serving; erasure reaches both (see the search index adapter). The swap
 * moves the live alias in one atomic `_aliases` call and deletes the old index in the same step, so no
 * copy of an erased document survives behind a name nothing erases any more.
 */
import type { Client } from '@elastic/elasticsearch';
import { validationError } from '../../shared/errors.js';
import type { MemoryRecord } from '../model/records.js';
import { vectorsOrNull, type Embedder } from './embedder.port.js';
import {
  indexEmbedderOf,
  memoryIndexMapping,
  memoryIndexSettings,
  reembedIndexName,
  tenantIndexNames,
  toIndexDocument,
} from './index-layout.js';
import { SearchIndexError, esErrorType, guarded, isIndexNotFound, toSearchIndexError } from './search-index-error.js';

export interface ReembedStart {
  /** The concrete index being filled. */
  target: string;
  /** The concrete indices behind the live alias when the re-embedding began: deleted at the swap. */
  previous: string[];
  model: string;
}

export interface Reembedder {
  /** Creates the target index and points `next` at it; idempotent for one generation, refused for another. */
  begin(tenant: string, generation: string): Promise<ReembedStart>;
  /** Indexes records into the target (as they are in the store now). */
  copy(tenant: string, records: readonly MemoryRecord[]): Promise<{ indexed: number; failed: number }>;
  /** Moves the live alias to the target and deletes the previous indices; idempotent. */
  swap(tenant: string, start: ReembedStart): Promise<{ swapped: boolean; dropped: number }>;
  /** Ids in the live index after `afterId`, in id order: for the reconciliation after the swap. */
  liveIds(tenant: string, afterId: string | null, size: number): Promise<string[]>;
  /** Gives up a re-embedding: removes `next` and deletes the target. The live index is untouched. */
  /** Deletes the new index unless the alias already serves it; says which (a live target is kept). */
  abandon(tenant: string, target: string): Promise<{ live: boolean }>;
}

export interface ReembedderOptions {
  prefix: string;
  embedder: Embedder;
  indexSettings?: Record<string, unknown>;
}

type AliasMap = Record<string, { aliases?: Record<string, { is_write_index?: boolean }> }>;

export function createElasticsearchReembedder(client: Client, options: ReembedderOptions): Reembedder {
  const { prefix, embedder } = options;

  async function indicesOf(alias: string): Promise<string[]> {
    try {
      return Object.keys((await client.indices.getAlias({ name: alias })) as AliasMap).sort();
    } catch (error) {
      if (isIndexNotFound(error) || esErrorType(error) === 'aliases_not_found_exception') return [];
      const status = (error as { meta?: { statusCode?: number } }).meta?.statusCode;
      if (status === 404) return [];
      throw toSearchIndexError('get-alias', error);
    }
  }

  return {
    async begin(tenant, generation) {
      const { alias, next } = tenantIndexNames(prefix, tenant);
      const target = reembedIndexName(alias, generation);
      const live = await indicesOf(alias);
      if (live.length === 0) throw validationError('tenant', 'has no index to re-embed');
      const filling = await indicesOf(next);
      if (filling.some((name) => name !== target)) {
        throw new SearchIndexError(
          'reembed',
          null,
          'reembed_in_progress',
          false,
          'another re-embedding of the tenant runs',
        );
      }
      if (live.includes(target)) {
        // A retry after the swap: nothing is left to begin.
        return { target, previous: [], model: embedder.model };
      }
      try {
        // Created behind `next` in the same call: an index of the tenant behind no alias is an orphan to reconcile.
        await client.indices.create({
          index: target,
          aliases: { [next]: { is_write_index: true } },
          settings: memoryIndexSettings(options.indexSettings),
          mappings: memoryIndexMapping(embedder.dims, embedder.model),
        });
      } catch (error) {
        if (esErrorType(error) !== 'resource_already_exists_exception') throw toSearchIndexError('reembed', error);
      }
      const mapping = await guarded('reembed', () => client.indices.getMapping({ index: target }));
      if (indexEmbedderOf(mapping[target]?.mappings) !== embedder.model) {
        // The generation was begun by a process of another model: its copy would mix vectors.
        throw new SearchIndexError('reembed', null, 'embedder_mismatch', false, 'the target holds another model');
      }
      await guarded('reembed', () =>
        client.indices.updateAliases({ actions: [{ add: { index: target, alias: next, is_write_index: true } }] }),
      );
      return { target, previous: live.filter((name) => name !== target), model: embedder.model };
    },

    async copy(tenant, records) {
      const { next } = tenantIndexNames(prefix, tenant);
      if (records.some((r) => r.tenant !== tenant))
        throw validationError('records', 'a record belongs to another tenant');
      if (records.length === 0) return { indexed: 0, failed: 0 };
      const vectors = await vectorsOrNull(
        embedder,
        records.map((r) => r.content),
      );
      const operations = records.flatMap((record, i) => [
        { index: { _id: record._id } },
        toIndexDocument(record, vectors[i] ?? null),
      ]);
      const response = await guarded('reembed-copy', () =>
        client.bulk({ index: next, operations, require_alias: true, refresh: 'wait_for' }),
      );
      const failed = response.items.filter((item) => {
        const result = Object.values(item)[0];
        return !result || result.error !== undefined || result.status >= 300;
      }).length;
      return { indexed: records.length - failed, failed };
    },

    async swap(tenant, start) {
      const { alias, next } = tenantIndexNames(prefix, tenant);
      const live = await indicesOf(alias);
      const swapped = !(live.length === 1 && live[0] === start.target);
      if (swapped) {
        if (!(await indicesOf(next)).includes(start.target)) {
          throw new SearchIndexError('reembed-swap', null, 'reembed_target_missing', false);
        }
        await guarded('reembed-swap', () =>
          client.indices.updateAliases({
            actions: [
              ...live.map((index) => ({ remove: { index, alias } })),
              { add: { index: start.target, alias, is_write_index: true } },
              { remove: { index: start.target, alias: next } },
            ],
          }),
        );
      }
      const stale = start.previous.filter((name) => name !== start.target);
      if (stale.length > 0) {
        await guarded('reembed-swap', () => client.indices.delete({ index: stale, ignore_unavailable: true }));
      }
      return { swapped, dropped: stale.length };
    },

    async liveIds(tenant, afterId, size) {
      const { alias } = tenantIndexNames(prefix, tenant);
      const response = await guarded('reembed-reconcile', () =>
        client.search<{ memoryId: string }>({
          index: alias,
          size,
          _source: ['memoryId'],
          sort: [{ memoryId: 'asc' }],
          query: { match_all: {} },
          ...(afterId === null ? {} : { search_after: [afterId] }),
        }),
      );
      return response.hits.hits.map((h) => h._source?.memoryId ?? h._id!).filter((id): id is string => !!id);
    },

    async abandon(tenant, target) {
      const { alias } = tenantIndexNames(prefix, tenant);
      // After the swap the target is the live index: abandoning then would drop the tenant's search.
      if ((await indicesOf(alias)).includes(target)) return { live: true };
      try {
        await client.indices.delete({ index: target, ignore_unavailable: true });
      } catch (error) {
        if (!isIndexNotFound(error)) throw toSearchIndexError('reembed-abandon', error);
      }
      // Deleting the index removes its `next` alias with it.
      return { live: false };
    },
  };
}
