import type { MemoryStore } from '../memories/memory-store.js';
import type { SearchIndex } from './search-index.port.js';

/**
 * Indexes records read from the store, then reads them again: whatever an erasure marked deleted or purged
 * meanwhile is deleted from the index. Without the second look, an index write landing after an erasure's
 * purge would bring the document (and its content) back. The erasure marks a record before it purges it, so
 * either the purge runs after this write and removes it, or this second look sees the mark and removes it.
 */
export async function indexUnlessErased(
  index: SearchIndex,
  memories: MemoryStore,
  tenant: string,
  ids: readonly string[],
): Promise<{ indexed: number; withdrawn: number }> {
  if (ids.length === 0) return { indexed: 0, withdrawn: 0 };
  const records = await memories.getMany(tenant, ids);
  const result = records.length > 0 ? await index.upsert(tenant, records, { refresh: 'wait_for' }) : { indexed: 0 };
  const now = new Map((await memories.getMany(tenant, ids)).map((m) => [m._id, m.status]));
  const erased = ids.filter((id) => {
    const status = now.get(id);
    return status === undefined || status === 'deleted' || status === 'purged';
  });
  if (erased.length > 0) await index.purge(tenant, erased);
  const withdrawn = records.filter((r) => erased.includes(r._id)).length;
  return { indexed: result.indexed - withdrawn, withdrawn };
}
