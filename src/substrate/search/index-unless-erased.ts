import type { MemoryStore } from '../memories/memory-store.js';
import type { WrittenTogether } from '../model/written-together.js';
import type { SearchIndex, SegmentStats } from './search-index.port.js';

/**
 * How long a late withdrawal waits for its deleted documents to leave the segments: a force merge cannot drop a
 * deleted document until the soft-delete retention lease has moved past it (a sync every 30 s by default).
 */
export interface ExpungeWait {
  attempts: number;
  intervalMs: number;
}

const LEASE_WAIT: ExpungeWait = { attempts: 30, intervalMs: 2000 };

/**
 * Deletes documents written after an erasure marked their records, then expunges them. The erasure that marked
 * them may have finished (its expunge and verification done) before this write landed: without an expunge of
 * its own, the withdrawn document would stay in the segments as a deleted document, content included, until the
 * tenant's next erasure. Returns the segment figures once `_segments` reports no deleted document; throws
 * `ExpungeIncomplete` if it still does after the wait.
 */
export async function withdrawLate(
  index: SearchIndex,
  tenant: string,
  ids: readonly string[],
  wait: ExpungeWait = LEASE_WAIT,
): Promise<SegmentStats> {
  await index.purge(tenant, ids);
  let stats = await index.expungeDeleted(tenant);
  for (let attempt = 1; stats.deletedDocs > 0 && attempt < wait.attempts; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, wait.intervalMs));
    stats = await index.expungeDeleted(tenant);
  }
  // The figures are checked, not only read: a withdrawal whose documents are still in the segments fails, and the
  // activity that made it retries (every step above is idempotent) instead of reporting content gone that is not.
  if (stats.deletedDocs > 0) throw new ExpungeIncomplete(stats.deletedDocs);
  return stats;
}

/** Deleted documents still in the index's segments after a withdrawal waited for them: a count, never content. */
export class ExpungeIncomplete extends Error {
  override readonly name = 'ExpungeIncomplete';
  constructor(readonly deletedDocs: number) {
    super(`index withdrawal: ${deletedDocs} deleted documents still in the segments after the expunge`);
  }
}

/**
 * Indexes records read from the store, then reads them again: whatever an erasure marked deleted or purged
 * meanwhile is deleted from the index and expunged. Without the second look, an index write landing after an
 * erasure's purge would bring the document (and its content) back. The erasure marks a record before it purges
 * it, so either the purge runs after this write and removes it, or this second look sees the mark and removes it.
 */
export async function indexUnlessErased(
  index: SearchIndex,
  memories: MemoryStore,
  tenant: string,
  ids: readonly string[],
  written?: WrittenTogether,
): Promise<{ indexed: number; withdrawn: number }> {
  if (ids.length === 0) return { indexed: 0, withdrawn: 0 };
  const records = await memories.getMany(tenant, ids, written);
  const result = records.length > 0 ? await index.upsert(tenant, records, { refresh: 'wait_for' }) : { indexed: 0 };
  // Statuses only: whether a mark or a purge came meanwhile needs neither the content nor its keys.
  const now = new Map((await memories.factsOf(tenant, ids, written)).map((m) => [m._id, m.status]));
  const erased = ids.filter((id) => {
    const status = now.get(id);
    return status === undefined || status === 'deleted' || status === 'purged';
  });
  const withdrawn = records.filter((r) => erased.includes(r._id)).length;
  // Only what this call wrote needs an expunge of its own; an id it never wrote is the erasure's to purge.
  if (withdrawn > 0) await withdrawLate(index, tenant, erased);
  else if (erased.length > 0) await index.purge(tenant, erased);
  return { indexed: result.indexed - withdrawn, withdrawn };
}
