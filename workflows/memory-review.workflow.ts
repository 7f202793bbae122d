import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  patched,
  proxyActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { createReviewActivities } from '../activities/review.activities.js';
import type { createDisputeActivities } from '../activities/dispute.activities.js';
import { startDisputeReviews } from './dispute-start.js';
import { refusal } from './refusal.js';
import { ErrorType } from '../src/shared/errors.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';
import {
  decideReviewUpdate,
  reviewStateQuery,
  type MemoryReviewInput,
  type ReviewDecisionInput,
  type ReviewOutcome,
} from '../src/temporal/contracts/memory-review.contract.js';
import { selfReviewRefusal } from '../src/shared/self-review.js';

type Activities = ReturnType<typeof createReviewActivities>;
const store = proxyActivities<Activities>(RetryProfiles.storeWrite);
const notify = proxyActivities<Activities>(RetryProfiles.notify);
const { detectContradictions } = proxyActivities<ReturnType<typeof createDisputeActivities>>(RetryProfiles.storeWrite);

/**
 * Human sign-off for a high-impact write waiting in `candidate`: a reviewer decides through an Update (and
 * gets the answer); reviewers are reminded, then the escalation contact is told, and at the final deadline
 * the policy's default applies. Durations come from the review-sla policy.
 */
/** How long the deadline's default waits for a running erasure of its record to finish before it looks again. */
const ERASURE_WAIT = '1 hour';

/** The failure type of an activity's refusal, if it is one. */
function refusalType(error: unknown): string | undefined {
  return error instanceof ActivityFailure && error.cause instanceof ApplicationFailure
    ? (error.cause.type ?? undefined)
    : undefined;
}

export async function memoryReview(input: MemoryReviewInput): Promise<ReviewOutcome> {
  const ref = { tenant: input.tenant, memoryId: input.memoryId };
  let outcome: ReviewOutcome | undefined;
  /** Who is applying a decision right now: set before its activity runs, so that no second decision is
   * accepted while the first is in flight, and the loser is told which side won. */
  let deciding: 'reviewer' | 'default' | undefined;
  const settled = () => outcome !== undefined || deciding !== undefined;
  let stage: 'waiting' | 'reminded' | 'escalated' = 'waiting';

  setHandler(reviewStateQuery, () => ({ state: outcome ? 'decided' : 'pending', stage }));
  setHandler(
    decideReviewUpdate,
    async (decision: ReviewDecisionInput) => {
      deciding = 'reviewer';
      try {
        const status = await store.applyReviewDecision({ ...ref, ...decision, byDefault: false });
        outcome = { status, decidedBy: decision.reviewer, byDefault: false };
        return outcome;
      } catch (error) {
        // Nothing was decided (e.g. the record is gone): the item stays open to the next decision.
        deciding = undefined;
        throw error;
      }
    },
    {
      validator: (decision: ReviewDecisionInput) => {
        const by = outcome ? (outcome.byDefault ? 'default' : 'reviewer') : deciding;
        if (by === 'default')
          throw refusal(
            ErrorType.Conflict,
            'review: already decided by the policy default at the deadline',
            'decision',
          );
        if (by === 'reviewer')
          throw refusal(ErrorType.Conflict, 'review: already decided by another reviewer', 'decision');
        const self = selfReviewRefusal({ kind: 'review', writtenBy: input.writtenBy }, decision.reviewer);
        if (self) throw refusal(ErrorType.Forbidden, self, 'reviewer');
        if (decision.decision !== 'approve' && decision.decision !== 'reject') {
          throw refusal(ErrorType.Validation, 'decision: approve or reject', 'decision');
        }
        if (!decision.reasonHash) throw refusal(ErrorType.Validation, 'reason: required', 'reason');
      },
    },
  );

  /**
   * The policy's default at the final deadline. A running erasure owns the record: the default waits for it and
   * looks again (the erasure may be rejected); a record erased meanwhile ends the review with nothing decided.
   */
  async function applyDefault(reviewer: string, decision: 'approve' | 'reject'): Promise<ReviewOutcome['status']> {
    for (;;) {
      try {
        return await store.applyReviewDecision({
          ...ref,
          reviewer,
          decision,
          reasonHash: 'final-deadline',
          byDefault: true,
        });
      } catch (error) {
        const type = refusalType(error);
        if (type === ErrorType.Conflict) await sleep(ERASURE_WAIT);
        else if (type === ErrorType.NotFound || type === ErrorType.IllegalTransition) return 'erased';
        else throw error;
      }
    }
  }

  // Histories recorded before this patch ran the default however a same-activation race had gone, and waited for a
  // failed reviewer's decision to be retried by another reviewer past the final deadline.
  const looksAgain = patched('review-deadline-looks-again');
  const startedAt = Date.now();
  /**
   * Waits until the review is settled or `ms` pass; true when the time passed with nothing settled. A deadline's
   * timer and a reviewer's Update can land in the same activation, and the timer's side of the race can win it:
   * the state is looked at again, so a decision a reviewer has already begun is never overtaken by the default.
   */
  const lapsed = async (ms: number) => !(await condition(settled, ms)) && (!looksAgain || !settled());

  const { reminderMs, escalationMs, finalMs } = input.plan;
  if (await lapsed(reminderMs)) {
    stage = 'reminded';
    await notify.sendReviewNotice({ ...ref, kind: 'reminder' });
  }
  if (!settled() && (await lapsed(Math.max(1, escalationMs - reminderMs)))) {
    stage = 'escalated';
    await notify.sendReviewNotice({ ...ref, kind: 'escalation' });
  }
  let finalPassed = !settled() && (await lapsed(Math.max(1, finalMs - escalationMs)));
  for (;;) {
    if (finalPassed) {
      // The default claims the decision before its activity runs: a reviewer's Update arriving meanwhile is refused.
      deciding = 'default';
      const decision = input.plan.defaultDecision;
      const reviewer = `policy:${input.plan.policy.timeoutId}@${input.plan.policy.timeoutVersion}`;
      const status = await applyDefault(reviewer, decision);
      if (status === 'erased') return { status, decidedBy: reviewer, byDefault: true };
      outcome = { status, decidedBy: reviewer, byDefault: true };
      await notify.sendReviewNotice({ ...ref, kind: 'defaulted' });
      break;
    }
    if (!looksAgain) {
      await condition(() => outcome !== undefined);
      break;
    }
    // A reviewer's decision in flight lands before anything else happens. If it fails, nothing was decided: the
    // item is open again, and the final deadline still decides it unless another reviewer does first.
    await condition(() => outcome !== undefined || deciding === undefined);
    if (outcome !== undefined) break;
    const left = startedAt + finalMs - Date.now();
    finalPassed = left <= 0 ? !settled() : await lapsed(left);
  }
  // An approved write is compared with what is held only now: a candidate asserts nothing until it is signed off.
  if (outcome!.status === 'active') {
    const found = await detectContradictions({ tenant: input.tenant, ids: [input.memoryId] });
    await startDisputeReviews(input.tenant, found.disputes);
  }
  return outcome!;
}
