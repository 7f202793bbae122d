/**
 * The tenant's index as this process finds it: created on first use, which model its vectors come from, where
 * a write goes while a re-embedding runs, and every concrete index an erasure must reach.
 */
import { indexEmbedderOf, isTenantIndexName, memoryIndexMapping, memoryIndexSettings } from './index-layout.js';
import { aliasExists, type SearchIndexContext } from './search-index-context.js';
import { SearchIndexError, esErrorType, guarded, isIndexNotFound, toSearchIndexError } from './search-index-error.js';
import type { IndexRole } from './search-index.port.js';

/**
 * Every concrete index of the tenant, live first: behind the live alias, behind the re-embedding's alias, and any
 * other index named as the tenant's (an orphan a failed re-embedding left behind). Erasure reaches them all, so
 * no copy outlives a purge while an orphan waits for the reconcile that deletes it.
 */
export async function erasureTargets(
  ctx: SearchIndexContext,
  tenant: string,
): Promise<{ index: string; role: IndexRole }[]> {
  const { client } = ctx;
  const { alias, next } = ctx.names(tenant);
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
async function indexEmbedder(ctx: SearchIndexContext, tenant: string): Promise<string | null> {
  const { alias } = ctx.names(tenant);
  try {
    const response = await ctx.client.indices.getMapping({ index: alias });
    const mappings = Object.values(response).map((m) => indexEmbedderOf(m.mappings));
    return mappings[0] ?? null;
  } catch (error) {
    if (isIndexNotFound(error)) return null;
    throw toSearchIndexError('get-mapping', error);
  }
}

/** True when the tenant's vectors and this process's come from one model (or the tenant has no index). */
export async function matchesModel(ctx: SearchIndexContext, tenant: string): Promise<boolean> {
  const { sameModel, embedder } = ctx;
  if (sameModel.has(tenant)) return true;
  const found = await indexEmbedder(ctx, tenant);
  if (found !== null && found !== embedder.model) return false;
  if (found !== null) sameModel.add(tenant);
  return true;
}

export async function assertSameModel(ctx: SearchIndexContext, tenant: string, operation: string): Promise<void> {
  if (await matchesModel(ctx, tenant)) return;
  // Retryable: while a re-embedding runs, writes and probes wait for its alias swap instead of failing for good.
  throw new SearchIndexError(
    operation,
    null,
    'embedder_mismatch',
    true,
    `the tenant's index holds vectors of another model than ${ctx.embedder.model}: re-embed the tenant`,
  );
}

/**
 * Where an upsert goes: the live alias, or, while a re-embedding to this process's model fills the tenant's
 * `next` index, that index (the swap makes it live; the old model's index could not take this vector).
 */
export async function writeTarget(ctx: SearchIndexContext, tenant: string): Promise<string> {
  const { alias, next } = ctx.names(tenant);
  if (ctx.ensured.has(tenant)) return alias;
  try {
    await ensureTenantIndex(ctx, tenant);
    return alias;
  } catch (error) {
    if (!(error instanceof SearchIndexError) || error.esType !== 'embedder_mismatch') throw error;
    const filling = await ctx.client.indices.getMapping({ index: next }).catch(() => null);
    const models = filling ? Object.values(filling).map((m) => indexEmbedderOf(m.mappings)) : [];
    if (models.length === 1 && models[0] === ctx.embedder.model) return next;
    throw error;
  }
}

export async function ensureTenantIndex(ctx: SearchIndexContext, tenant: string): Promise<void> {
  const { client, embedder, ensured } = ctx;
  const { alias, index } = ctx.names(tenant);
  if (await aliasExists(ctx, alias)) {
    await assertSameModel(ctx, tenant, 'ensure-index');
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
      settings: memoryIndexSettings(ctx.indexSettings),
      mappings: memoryIndexMapping(embedder.dims, embedder.model),
    });
  } catch (error) {
    // A concurrent creator won the race: wait until its index can take writes.
    if (esErrorType(error) !== 'resource_already_exists_exception') throw toSearchIndexError('create-index', error);
    await guarded('create-index', () => client.cluster.health({ index, wait_for_status: 'yellow', timeout: '30s' }));
    if (!(await aliasExists(ctx, alias)))
      throw new SearchIndexError('create-index', null, 'index_without_alias', false);
  }
  ensured.add(tenant);
}

/** The concrete index behind the tenant's alias, or null when the tenant has none. */
export async function indexOf(ctx: SearchIndexContext, tenant: string): Promise<string | null> {
  const { alias } = ctx.names(tenant);
  if (!(await aliasExists(ctx, alias))) return null;
  const response = await guarded('index-of', () => ctx.client.indices.getAlias({ name: alias }));
  return Object.keys(response).sort()[0] ?? null;
}
