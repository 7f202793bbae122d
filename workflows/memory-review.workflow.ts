import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createReviewActivities } from '../activities/review.activities.js';
import type { createDisputeActivities } from '../activities/dispute.activities.js';
import { startDisputeReviews } from './dispute-start.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';
import {
  decideReviewUpdate,
  reviewStateQuery,
  type MemoryReviewInput,
  type ReviewDecisionInput,
  type ReviewOutcome,
} from './memory-review.definitions.js';

type Activities = ReturnType<typeof createReviewActivities>;
const store = proxyActivities<Activities>(RetryProfiles.storeWrite);
const notify = proxyActivities<Activities>(RetryProfiles.notify);
const { detectContradictions } = proxyActivities<ReturnType<typeof createDisputeActivities>>(RetryProfiles.storeWrite);

/**
 * Human sign-off for a high-impact write waiting in `candidate`: a reviewer decides through an Update (and
 * gets the answer); reviewers are reminded, then the escalation contact is told, and at the final deadline
 * the policy's default applies. Durations come from the review-sla policy.
 */
export async function memoryReview(input: MemoryReviewInput): Promise<ReviewOutcome> {
  const ref = { tenant: input.tenant, memoryId: input.memoryId };
  let outcome: ReviewOutcome | undefined;
  let stage: 'waiting' | 'reminded' | 'escalated' = 'waiting';

  setHandler(reviewStateQuery, () => ({ state: outcome ? 'decided' : 'pending', stage }));
  setHandler(
    decideReviewUpdate,
    async (decision: ReviewDecisionInput) => {
      const status = await store.applyReviewDecision({ ...ref, ...decision, byDefault: false });
      outcome = { status, decidedBy: decision.reviewer, byDefault: false };
      return outcome;
    },
    {
      validator: (decision: ReviewDecisionInput) => {
        if (outcome) throw new Error('review: already decided');
        if (decision.reviewer === input.writtenBy) throw new Error('reviewer: may not decide on a write they made');
        if (decision.decision !== 'approve' && decision.decision !== 'reject') throw new Error('decision: approve or reject');
        if (!decision.reasonHash) throw new Error('reason: required');
      },
    },
  );

  const { reminderMs, escalationMs, finalMs } = input.plan;
  if (!(await condition(() => outcome !== undefined, reminderMs))) {
    stage = 'reminded';
    await notify.sendReviewNotice({ ...ref, kind: 'reminder' });
  }
  if (!outcome && !(await condition(() => outcome !== undefined, Math.max(1, escalationMs - reminderMs)))) {
    stage = 'escalated';
    await notify.sendReviewNotice({ ...ref, kind: 'escalation' });
  }
  if (!outcome && !(await condition(() => outcome !== undefined, Math.max(1, finalMs - escalationMs)))) {
    const decision = input.plan.defaultDecision;
    const reviewer = `policy:${input.plan.policy.timeoutId}@${input.plan.policy.timeoutVersion}`;
    const status = await store.applyReviewDecision({ ...ref, reviewer, decision, reasonHash: 'final-deadline', byDefault: true });
    outcome = { status, decidedBy: reviewer, byDefault: true };
    await notify.sendReviewNotice({ ...ref, kind: 'defaulted' });
  }
  // An approved write is compared with what is held only now: a candidate asserts nothing until it is signed off.
  if (outcome!.status === 'active') {
    const found = await detectContradictions({ tenant: input.tenant, ids: [input.memoryId] });
    await startDisputeReviews(input.tenant, found.disputes);
  }
  return outcome!;
}
