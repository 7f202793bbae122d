/**
 * A high-impact write's sign-off workflow as the routes and the workflow share it: input, the decision Update, the
 * state query.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { ReviewPlan } from '../../governance/review/review-plan.js';

export interface MemoryReviewInput {
  tenant: string;
  memoryId: string;
  /** The principal who wrote the memory: they may not decide on it. */
  writtenBy: string;
  plan: ReviewPlan;
}

export interface ReviewDecisionInput {
  reviewer: string;
  decision: 'approve' | 'reject';
  /** Keyed hash of the reviewer's reason; the reason itself is kept in MongoDB, never in history. */
  reasonHash: string;
}

export interface ReviewOutcome {
  /** `erased`: the record was erased before anyone decided; nothing was decided. */
  status: 'active' | 'rejected' | 'erased';
  decidedBy: string;
  byDefault: boolean;
}

/** A reviewer's decision; answers the resulting status. Refused for the writer, or once decided. */
export const decideReviewUpdate = defineUpdate<ReviewOutcome, [ReviewDecisionInput]>('decideReview');
export const reviewStateQuery = defineQuery<{
  state: 'pending' | 'decided';
  stage: 'waiting' | 'reminded' | 'escalated';
}>('reviewState');
