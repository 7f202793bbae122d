import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createDisputeActivities } from '../activities/dispute.activities.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';
import { ErrorType } from '../src/shared/errors.js';
import { refusal } from './refusal.js';
import {
  adjudicateUpdate,
  disputeStateQuery,
  disputeVoidedSignal,
  type DisputeVoided,
  type AdjudicationInput,
  type AdjudicationResult,
  type DisputeReviewInput,
} from '../src/temporal/contracts/dispute-review.contract.js';
import { selfReviewRefusal } from '../src/shared/self-review.js';

type Activities = ReturnType<typeof createDisputeActivities>;
const store = proxyActivities<Activities>(RetryProfiles.storeWrite);
const notify = proxyActivities<Activities>(RetryProfiles.notify);

/** Why an adjudication is refused before it reaches the stores, or null. Pure. */
export function adjudicationRefusal(input: DisputeReviewInput, decision: AdjudicationInput): string | null {
  const self = selfReviewRefusal({ kind: 'dispute', writers: input.writers }, decision.reviewer);
  if (self) return self;
  if (!['keep-one', 'keep-both', 'reject-one'].includes(decision.outcome))
    return 'outcome: keep-one, keep-both or reject-one';
  if (decision.outcome === 'keep-both' && decision.memoryId !== undefined) return 'memoryId: not used with keep-both';
  if (decision.outcome !== 'keep-both' && (!decision.memoryId || !input.memoryIds.includes(decision.memoryId))) {
    return 'memoryId: must name one of the two records of the dispute';
  }
  if (!decision.reasonHash) return 'reason: required';
  return null;
}

/**
 * A dispute between two memories waits for a person: a reviewer adjudicates through an Update (and gets the
 * resulting statuses); reviewers are told when it opens and reminded, then the escalation contact is told. There
 * is no default: both records stay disputed, and are disclosed side by side, until someone decides.
 */
export async function disputeReview(input: DisputeReviewInput): Promise<AdjudicationResult | DisputeVoided> {
  let result: AdjudicationResult | undefined;
  let deciding = false;
  let voided = false;
  const over = () => result !== undefined || voided;
  let stage: 'waiting' | 'reminded' | 'escalated' = 'waiting';
  const ref = { tenant: input.tenant, disputeId: input.disputeId };

  setHandler(disputeStateQuery, () => ({ state: result ? 'resolved' : voided ? 'void' : 'open', stage }));
  setHandler(disputeVoidedSignal, () => {
    voided = true;
  });
  setHandler(
    adjudicateUpdate,
    async (decision: AdjudicationInput) => {
      deciding = true;
      let statuses;
      try {
        statuses = await store.applyAdjudication({ ...ref, ...decision, memoryId: decision.memoryId ?? null });
      } catch (error) {
        // Nothing was decided (a record of the dispute is being erased): the dispute stays open to the next one.
        deciding = false;
        throw error;
      }
      result = { disputeId: input.disputeId, outcome: decision.outcome, decidedBy: decision.reviewer, statuses };
      return result;
    },
    {
      validator: (decision: AdjudicationInput) => {
        // One refusal for a decided and a voided dispute: the API tells only callers with erasure rights which.
        if (result || deciding || voided)
          throw refusal(ErrorType.Conflict, 'dispute: already closed by another decision', 'id');
        const refused = adjudicationRefusal(input, decision);
        if (refused) {
          // Each refusal starts with the field it is about.
          const field = refused.slice(0, refused.indexOf(':'));
          throw refusal(field === 'reviewer' ? ErrorType.Forbidden : ErrorType.Validation, refused, field);
        }
      },
    },
  );

  await notify.sendDisputeNotice({ ...ref, kind: 'opened' });
  if (!(await condition(over, input.plan.reminderMs))) {
    stage = 'reminded';
    await notify.sendDisputeNotice({ ...ref, kind: 'reminder' });
  }
  if (!over() && !(await condition(over, Math.max(1, input.plan.escalationMs - input.plan.reminderMs)))) {
    stage = 'escalated';
    await notify.sendDisputeNotice({ ...ref, kind: 'escalation' });
  }
  await condition(over);
  // A decision in flight when the signal came still lands: the Update's activity has run.
  if (deciding) await condition(() => result !== undefined);
  return result ?? { disputeId: input.disputeId, voided: true };
}
