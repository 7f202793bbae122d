/**
 * Writes to a tenant's index: records upserted with their vectors in `_bulk` batches, and status moves applied
 * to the live index and to a re-embedding's copy alike.
 */
import { MEMORY_STATUSES, type MemoryStatus } from '../../shared/lifecycle.js';
import { validationError } from '../../shared/errors.js';
import type { MemoryRecord } from '../model/records.js';
import { vectorsOrNull } from './embedder.port.js';
import { toIndexDocument } from './index-layout.js';
import { aliasExists, bulkItem, chunks, failureOf, type SearchIndexContext } from './search-index-context.js';
import { SearchIndexError, guarded } from './search-index-error.js';
import type { ItemFailure, RefreshMode, UpdateStatusResult, UpsertResult } from './search-index.port.js';
import { writeTarget } from './tenant-index.js';

export async function upsertRecords(
  ctx: SearchIndexContext,
  tenant: string,
  records: readonly MemoryRecord[],
  { refresh: refreshMode = false }: { refresh?: RefreshMode } = {},
): Promise<UpsertResult> {
  const { client, chunkSize, ensured } = ctx;
  if (records.some((r) => r.tenant !== tenant)) throw validationError('records', 'a record belongs to another tenant');
  if (records.length === 0) return { indexed: 0, failed: [] };
  const target = await writeTarget(ctx, tenant);
  let indexed = 0;
  const failed: ItemFailure[] = [];
  const batches = chunks(records, chunkSize);
  for (const [n, batch] of batches.entries()) {
    const vectors = await vectorsOrNull(
      ctx.embedder,
      batch.map((r) => r.content),
    );
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
}

export async function updateStatus(
  ctx: SearchIndexContext,
  tenant: string,
  ids: readonly string[],
  status: MemoryStatus,
  { refresh: refreshMode = false }: { refresh?: RefreshMode } = {},
): Promise<UpdateStatusResult> {
  const { client, chunkSize } = ctx;
  const { alias, next } = ctx.names(tenant);
  if (!MEMORY_STATUSES.includes(status)) throw validationError('status', 'is not a memory status');
  const result: UpdateStatusResult = { updated: 0, notFound: 0, failed: [] };
  const unique = [...new Set(ids)];
  const batches = chunks(unique, chunkSize);
  // A re-embedding's copy takes the move as well; its counts are not the caller's (the live alias answers).
  if (unique.length > 0 && (await aliasExists(ctx, next))) {
    for (const batch of batches) {
      const operations = batch.flatMap((id) => [{ update: { _id: id } }, { doc: { status } }]);
      const response = await guarded('update-status', () =>
        client.bulk({ index: next, operations, require_alias: true, refresh: refreshMode }),
      );
      const failure = response.items
        .map(bulkItem)
        .find((i) => i.error && i.error.type !== 'document_missing_exception');
      if (failure) throw new SearchIndexError('update-status', failure.status, failure.error?.type ?? 'unknown', true);
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
}
