/**
 * A person's decision handed to the workflow that waits for it: a reviewer's on a high-impact write or a dispute, or on
 * a correction. Each is an Update, so of two deciding at once exactly one is accepted and the other is told why.
 */
import type { Client } from '@temporalio/client';
import { disputeWorkflowId, rectificationWorkflowId, reviewWorkflowId } from '../shared/workflow-ids.js';
import { adjudicateUpdate, type AdjudicationInput } from './contracts/dispute-review.contract.js';
import { decideReviewUpdate, type ReviewDecisionInput } from './contracts/memory-review.contract.js';
import { decideRectificationUpdate, type RectificationDecisionInput } from './contracts/rectification.contract.js';

export function createDecisionGateway(client: Client) {
  return {
    decideReview: (tenant: string, memoryId: string, input: ReviewDecisionInput) =>
      client.workflow
        .getHandle(reviewWorkflowId(tenant, memoryId))
        .executeUpdate(decideReviewUpdate, { args: [input] }),
    adjudicate: (tenant: string, disputeId: string, input: AdjudicationInput) =>
      client.workflow
        .getHandle(disputeWorkflowId(tenant, disputeId))
        .executeUpdate(adjudicateUpdate, { args: [input] }),
    decideRectification: (tenant: string, requestId: string, input: RectificationDecisionInput) =>
      client.workflow
        .getHandle(rectificationWorkflowId(tenant, requestId))
        .executeUpdate(decideRectificationUpdate, { args: [input] }),
  };
}
export type DecisionGateway = ReturnType<typeof createDecisionGateway>;
