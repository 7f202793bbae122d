import type { AuditLog } from '../src/governance/audit/audit-log.port.js';
import type { MemoryStore } from '../src/substrate/memories/memory-store.js';
import type { MemoryRecord } from '../src/substrate/model/records.js';
import type { ReembedStart, Reembedder } from '../src/substrate/search/elasticsearch-reembedder.js';
import { indexUnlessErased, withdrawLate } from '../src/substrate/search/index-unless-erased.js';
import type { SearchIndex } from '../src/substrate/search/search-index.port.js';

export type { ReembedStart } from '../src/substrate/search/elasticsearch-reembedder.js';

export interface ReembedActivityDeps {
  memories: MemoryStore;
  index: SearchIndex;
  reembedder: Reembedder;
  audit: AuditLog;
}

/** One page of a walk over the tenant: counts and the cursor only (ids of records, never content). */
export interface ReembedPage {
  seen: number;
  written: number;
  /** Records an erasure marked while the page was copied: taken out of the index again. */
  withdrawn: number;
  last: string | null;
  done: boolean;
}

const MAX_PAGE = 1000;

/** Erased, or on the way to it: never copied into a new index. */
function erased(record: MemoryRecord | undefined): boolean {
  return record === undefined || record.status === 'deleted' || record.status === 'purged';
}

export function createReembedActivities(deps: ReembedActivityDeps) {
  const page = (size: number) => Math.min(Math.max(1, Math.floor(size)), MAX_PAGE);

  /**
   * Copies, then reads the page again and deletes and expunges whatever an erasure marked meanwhile (from both
   * indices: the adapter's purge reaches the copy). Either the erasure's purge comes after the copy and removes it, or
   * this second look sees the mark: the same argument as every other index write.
   */
  async function copyPage(input: { tenant: string; after: string | null; pageSize: number }): Promise<ReembedPage> {
    const records = await deps.memories.pageOfTenant(input.tenant, input.after, page(input.pageSize));
    const live = records.filter((r) => !erased(r));
    const { indexed } = await deps.reembedder.copy(input.tenant, live);
    const now = new Map(
      (
        await deps.memories.getMany(
          input.tenant,
          live.map((r) => r._id),
        )
      ).map((r) => [r._id, r]),
    );
    const gone = live.filter((r) => erased(now.get(r._id))).map((r) => r._id);
    // The erasure that marked them may already be complete: the withdrawal expunges its own deleted documents.
    if (gone.length > 0) await withdrawLate(deps.index, input.tenant, gone);
    return {
      seen: records.length,
      written: indexed - gone.length,
      withdrawn: gone.length,
      last: records.at(-1)?._id ?? input.after,
      done: records.length < page(input.pageSize),
    };
  }

  /** After the swap: records changed since the copy began are indexed again through the live alias. */
  async function catchUpPage(input: {
    tenant: string;
    since: string;
    after: string | null;
    pageSize: number;
  }): Promise<ReembedPage> {
    const since = new Date(input.since);
    const records = await deps.memories.pageOfTenant(input.tenant, input.after, page(input.pageSize));
    const changed = records.filter((r) => !erased(r) && r.updatedAt >= since).map((r) => r._id);
    const { indexed, withdrawn } = await indexUnlessErased(deps.index, deps.memories, input.tenant, changed);
    return {
      seen: records.length,
      written: indexed,
      withdrawn,
      last: records.at(-1)?._id ?? input.after,
      done: records.length < page(input.pageSize),
    };
  }

  /** After the swap: every document of the live index must still be a record that is not erased. */
  async function reconcilePage(input: {
    tenant: string;
    after: string | null;
    pageSize: number;
  }): Promise<ReembedPage> {
    const ids = await deps.reembedder.liveIds(input.tenant, input.after, page(input.pageSize));
    const found = new Map((await deps.memories.getMany(input.tenant, ids)).map((r) => [r._id, r]));
    const gone = ids.filter((id) => erased(found.get(id)));
    if (gone.length > 0) await withdrawLate(deps.index, input.tenant, gone);
    return {
      seen: ids.length,
      written: 0,
      withdrawn: gone.length,
      last: ids.at(-1) ?? input.after,
      done: ids.length < page(input.pageSize),
    };
  }

  return {
    async reembedBegin(input: { tenant: string; generation: string }): Promise<ReembedStart> {
      return deps.reembedder.begin(input.tenant, input.generation);
    },
    reembedCopyPage: copyPage,
    async reembedSwap(input: {
      tenant: string;
      start: ReembedStart;
      workflowId: string;
      copied: number;
    }): Promise<{ swapped: boolean; dropped: number }> {
      const result = await deps.reembedder.swap(input.tenant, input.start);
      await deps.audit.append({
        tenant: input.tenant,
        actor: input.workflowId,
        action: 'index.reembedded',
        target: input.start.target,
        outcome: 'ok',
        details: { model: input.start.model, copied: input.copied, dropped: result.dropped },
        idempotencyKey: `${input.workflowId}:swap`,
      });
      return result;
    },
    reembedCatchUpPage: catchUpPage,
    reembedReconcilePage: reconcilePage,
    async reembedAbandon(input: { tenant: string; target: string }): Promise<{ live: boolean }> {
      return deps.reembedder.abandon(input.tenant, input.target);
    },
  };
}
