import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { disputeReview } from './dispute-review.workflow.js';
import { disputeWorkflowId } from '../src/shared/workflow-ids.js';
import type { DisputeStart } from '../activities/dispute.activities.js';

/** Starts one adjudication workflow per dispute; a dispute already before a reviewer is left as it is. */
export async function startDisputeReviews(tenant: string, disputes: readonly DisputeStart[]): Promise<void> {
  for (const dispute of disputes) {
    try {
      await startChild(disputeReview, {
        workflowId: disputeWorkflowId(tenant, dispute.disputeId),
        parentClosePolicy: ParentClosePolicy.ABANDON,
        args: [{ tenant, ...dispute }],
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}
