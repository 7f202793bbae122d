import { ParentClosePolicy, condition, proxyActivities, setHandler, startChild } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { createRectificationActivities } from '../activities/rectification.activities.js';
import { selfReviewRefusal } from '../src/shared/self-review.js';
import { ErrorType } from '../src/shared/errors.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';
import { erasureWorkflowId } from '../src/shared/workflow-ids.js';
import { erasureRequest } from './erasure.workflow.js';
import { refusal } from './refusal.js';
import {
  decideRectificationUpdate,
  rectificationStateQuery,
  type RectificationDecisionInput,
  type RectificationInput,
  type RectificationResult,
} from '../src/temporal/contracts/rectification.contract.js';

type Activities = ReturnType<typeof createRectificationActivities>;
const store = proxyActivities<Activities>(RetryProfiles.storeWrite);
const notify = proxyActivities<Activities>(RetryProfiles.notify);

/**
 * A rectification (Art. 16) waits for a reviewer: the decision arrives as an Update, which applies it and answers
 * with what it did. An approved correction that erases the inaccurate value (or derived records the policy erases)
 * files that erasure and starts its workflow, which then runs on its own with its own certificate. The DPO is told
 * the outcome; mails that cannot be sent hold nothing back.
 */
export async function rectificationRequest(input: RectificationInput): Promise<RectificationResult> {
  let result: RectificationResult | undefined;
  let deciding = false;
  let reminded = false;
  const ref = { tenant: input.tenant, requestId: input.requestId };

  setHandler(rectificationStateQuery, () => ({
    state: result ? 'decided' : deciding ? 'deciding' : 'open',
    reminded,
  }));
  setHandler(
    decideRectificationUpdate,
    async (decision: RectificationDecisionInput) => {
      deciding = true;
      try {
        const outcome = await store.decideRectification({ ...ref, ...decision });
        let erasureRequestId: string | null = null;
        if (outcome.state === 'applied' && outcome.toErase.length > 0) {
          const erasure = await store.fileCorrectionErasure({ ...ref, memoryIds: outcome.toErase });
          erasureRequestId = erasure.requestId;
          try {
            await startChild(erasureRequest, {
              workflowId: erasureWorkflowId(input.tenant, erasure.requestId),
              parentClosePolicy: ParentClosePolicy.ABANDON,
              args: [erasure],
            });
          } catch (error) {
            if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
          }
        }
        result = { ...outcome, decidedBy: decision.reviewer, erasureRequestId };
        return result;
      } finally {
        deciding = false;
      }
    },
    {
      validator: (decision: RectificationDecisionInput) => {
        if (result || deciding)
          throw refusal(ErrorType.Conflict, 'rectification: already decided by another reviewer', 'id');
        const refused = selfReviewRefusal(
          { kind: 'rectification', writers: input.writers, requester: input.requester },
          decision.reviewer,
        );
        if (refused) throw refusal(ErrorType.Forbidden, refused, 'reviewer');
        if (decision.decision !== 'approve' && decision.decision !== 'reject')
          throw refusal(ErrorType.Validation, 'decision: approve or reject', 'decision');
        if (!decision.reasonHash) throw refusal(ErrorType.Validation, 'reason: required', 'reason');
      },
    },
  );

  await notifyQuietly({ ...ref, kind: 'opened' });
  if (!(await condition(() => result !== undefined, input.reminderMs))) {
    reminded = true;
    await notifyQuietly({ ...ref, kind: 'reminder' });
  }
  await condition(() => result !== undefined);
  await notifyQuietly({ ...ref, kind: 'decided', state: result!.state });
  return result!;
}

async function notifyQuietly(input: Parameters<Activities['sendRectificationNotice']>[0]): Promise<void> {
  try {
    await notify.sendRectificationNotice(input);
  } catch {
    // The request's page shows where it stands either way; the mail is a courtesy.
  }
}
