import { CancellationScope, ParentClosePolicy, proxyActivities, startChild } from '@temporalio/workflow';
import { memoryReview } from './memory-review.workflow.js';
import { startDisputeReviews } from './dispute-start.js';
import { reviewWorkflowId } from '../src/shared/workflow-ids.js';
import type { createIngestionActivities } from '../activities/ingestion.activities.js';
import type { createDisputeActivities } from '../activities/dispute.activities.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';
import type { IngestBatchInput } from '../src/temporal/contracts/ingest-batch.contract.js';
import type { IngestBatchResult } from '../src/temporal/contracts/ingest-batch.contract.js';

type IngestionActivities = ReturnType<typeof createIngestionActivities>;
const { admitStagedBatch, indexMemories } = proxyActivities<IngestionActivities>(RetryProfiles.storeWrite);
const { discardStage } = proxyActivities<IngestionActivities>(RetryProfiles.quick);
const { detectContradictions } = proxyActivities<ReturnType<typeof createDisputeActivities>>(RetryProfiles.storeWrite);

/**
 * The first governed path: a staged batch of events and memories is checked as a whole, written,
 * indexed, and its stage discarded. Many events per workflow, so bulk ingestion is not bound by start rate.
 * The stage is discarded whatever happens (refusal, failure, cancellation): nothing else would ever read it,
 * and it holds the batch's content and subjects.
 */
export async function ingestBatch(input: IngestBatchInput): Promise<IngestBatchResult> {
  try {
    return await ingest(input);
  } finally {
    // Even when the workflow is cancelled: the discard is idempotent and must not be skipped.
    await CancellationScope.nonCancellable(() => discardStage(input));
  }
}

async function ingest(input: IngestBatchInput): Promise<IngestBatchResult> {
  const result = await admitStagedBatch(input);
  let indexed = 0;
  let found: Awaited<ReturnType<typeof detectContradictions>> = { disputes: [], superseded: 0 };
  if (!result.refused) {
    // Before indexing, so that a contradicted write is never searchable as plainly active.
    const active = result.memories.filter((m) => m.status === 'active').map((m) => m.id);
    // The stage is named so that both read the batch's records by it (one query) rather than by a lookup each.
    if (active.length > 0)
      found = await detectContradictions({ tenant: input.tenant, ids: active, stageId: input.stageId });
    ({ indexed } = await indexMemories({
      tenant: input.tenant,
      ids: result.memories.map((m) => m.id),
      stageId: input.stageId,
    }));
    await startDisputeReviews(input.tenant, found.disputes);
    // High-impact writes wait for a reviewer in a sign-off workflow of their own, which outlives this one.
    for (const review of result.reviews) {
      await startChild(memoryReview, {
        workflowId: reviewWorkflowId(input.tenant, review.memoryId),
        parentClosePolicy: ParentClosePolicy.ABANDON,
        args: [{ tenant: input.tenant, ...review }],
      });
    }
  }
  const disputedIds = new Set(found.disputes.flatMap((d) => d.memoryIds));
  const memories = result.memories.map((m) => (disputedIds.has(m.id) ? { ...m, status: 'disputed' as const } : m));
  return {
    ...result,
    memories,
    indexed,
    disputes: found.disputes.map((d) => d.disputeId),
    superseded: found.superseded,
  };
}
