/**
 * Deletion from every concrete index of a tenant and the proof that it is physical: purge by ids with `_bulk`
 * (the local node has no `_delete_by_query`), expunge by force merge, segment statistics, the orphans a failed
 * re-embedding left behind, and the tenant's drop.
 */
import type { estypes } from '@elastic/elasticsearch';
import { bulkItem, chunks, failureOf, refresh, type SearchIndexContext } from './search-index-context.js';
import { SearchIndexError, guarded, isIndexNotFound, toSearchIndexError } from './search-index-error.js';
import type { IndexRole, ItemFailure, PurgeResult, ReachedIndex, SegmentStats } from './search-index.port.js';
import { erasureTargets } from './tenant-index.js';

/** A merge of a large index outlasts the client's default timeout; the caller retries anyway. */
const MERGE_TIMEOUT_MS = 10 * 60_000;

export async function purge(ctx: SearchIndexContext, tenant: string, ids: readonly string[]): Promise<PurgeResult> {
  const { client } = ctx;
  const unique = [...new Set(ids)];
  if (unique.length === 0) return { deleted: 0, notFound: 0, indices: [] };
  const targets = await erasureTargets(ctx, tenant);
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
    if (removed > 0 || failed.length > 0) await refresh(ctx, target, 'purge');
    reached.push({ index: target, role, deleted: removed });
  }
  const first = failed[0];
  if (first !== undefined) {
    // Deletes are idempotent: a retry of the whole call finishes the job.
    throw new SearchIndexError('purge', first.status, first.type, true, `${failed.length} of ${unique.length} failed`);
  }
  return { deleted, notFound, indices: reached };
}

export async function expungeDeleted(ctx: SearchIndexContext, tenant: string): Promise<SegmentStats> {
  const { client } = ctx;
  const targets = await erasureTargets(ctx, tenant);
  if (targets.length === 0) return { deletedDocs: 0, segments: 0, indices: [] };
  const index = targets.map((t) => t.index).join(',');
  await refresh(ctx, index, 'expunge');
  // Also set at creation; repeated for indices created before it was.
  await guarded('expunge', () =>
    client.indices.putSettings({ index, settings: { 'index.merge.policy.expunge_deletes_allowed': 0 } }),
  );
  await guarded('expunge', () =>
    client.indices.forcemerge({ index, only_expunge_deletes: true }, { requestTimeout: MERGE_TIMEOUT_MS }),
  );
  await refresh(ctx, index, 'expunge');
  await guarded('expunge', () => client.indices.flush({ index, wait_if_ongoing: true }));
  return segmentsOf(targets, await guarded('segments', () => client.indices.segments({ index })));
}

export async function segmentStats(ctx: SearchIndexContext, tenant: string): Promise<SegmentStats> {
  const targets = await erasureTargets(ctx, tenant);
  if (targets.length === 0) return { deletedDocs: 0, segments: 0, indices: [] };
  const index = targets.map((t) => t.index).join(',');
  return segmentsOf(targets, await guarded('segments', () => ctx.client.indices.segments({ index })));
}

export async function orphanIndices(ctx: SearchIndexContext, tenant: string): Promise<string[]> {
  return (await erasureTargets(ctx, tenant)).filter((t) => t.role === 'orphan').map((t) => t.index);
}

export async function dropOrphans(ctx: SearchIndexContext, tenant: string): Promise<string[]> {
  const orphans = (await erasureTargets(ctx, tenant)).filter((t) => t.role === 'orphan').map((t) => t.index);
  if (orphans.length === 0) return [];
  await guarded('drop-orphans', () => ctx.client.indices.delete({ index: orphans, ignore_unavailable: true }));
  return orphans;
}

export async function dropTenant(ctx: SearchIndexContext, tenant: string): Promise<void> {
  const { index } = ctx.names(tenant);
  const targets = new Set([index, ...(await erasureTargets(ctx, tenant)).map((t) => t.index)]);
  try {
    await ctx.client.indices.delete({ index: [...targets], ignore_unavailable: true });
  } catch (error) {
    if (!isIndexNotFound(error)) throw toSearchIndexError('drop-tenant', error);
  }
  ctx.ensured.delete(tenant);
  ctx.sameModel.delete(tenant);
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
