import { ApplicationFailure } from '@temporalio/activity';
import { admitBatch, type AdmissionDeps, type BatchResult, type StagedBatch } from '../src/ingestion/admit-batch.js';
import type { MemoryStore } from '../src/substrate/memories/memory-store.js';
import type { SearchIndex } from '../src/substrate/search/search-index.port.js';
import type { StagingStore } from '../src/substrate/staging/staging-store.js';
import { ErrorType } from '../src/shared/errors.js';
import { indexUnlessErased } from '../src/substrate/search/index-unless-erased.js';

export interface IngestionActivityDeps extends AdmissionDeps {
  staging: StagingStore;
  memories: MemoryStore;
  search: SearchIndex;
}

/** Activities of the write path; they read content from the stage, so workflow histories hold ids only. */
export function createIngestionActivities(deps: IngestionActivityDeps) {
  return {
    async admitStagedBatch(input: { tenant: string; stageId: string }): Promise<BatchResult> {
      const stage = await deps.staging.get<StagedBatch>(input.tenant, input.stageId);
      if (!stage) throw ApplicationFailure.nonRetryable(`stage ${input.stageId} not found`, ErrorType.NotFound);
      return admitBatch(deps, input.tenant, stage.principal, input.stageId, stage.body);
    },

    async indexMemories(input: { tenant: string; ids: string[]; stageId?: string }): Promise<{ indexed: number }> {
      // wait_for inside: a write acknowledged to an agent is searchable by its next query.
      const { indexed } = await indexUnlessErased(deps.search, deps.memories, input.tenant, input.ids, {
        ...(input.stageId ? { stageId: input.stageId } : {}),
      });
      return { indexed };
    },

    async discardStage(input: { tenant: string; stageId: string }): Promise<void> {
      await deps.staging.discard(input.tenant, input.stageId);
      // No attempt of this stage runs any more: a lease a failed attempt left need not be waited for.
      await deps.fences.admissions.close(input.tenant, input.stageId);
    },
  };
}
