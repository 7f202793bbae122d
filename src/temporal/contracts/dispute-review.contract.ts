/**
 * A dispute's workflow as the routes and the workflow share it: input, the adjudication Update and the voiding
 * signal.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ReviewPlan } from '../../governance/review/review-plan.js';
import type { Adjudication } from '../../governance/disputes/contradiction.js';
import type { MemoryStatus } from '../../shared/lifecycle.js';

export interface DisputeReviewInput {
  tenant: string;
  disputeId: string;
  memoryIds: string[];
  /** Whoever wrote either record: none of them may adjudicate. */
  writers: string[];
  plan: ReviewPlan;
}

export interface AdjudicationInput {
  reviewer: string;
  outcome: Adjudication;
  /** The record kept (keep-one) or rejected (reject-one); absent for keep-both. */
  memoryId?: string;
  /** Keyed hash of the reviewer's reason; the words are kept in MongoDB until the resolution event holds them. */
  reasonHash: string;
  /** Where the words wait, one key per call; absent, they wait under `reasonHash`. */
  reasonKey?: string;
}

export interface AdjudicationResult {
  disputeId: string;
  outcome: Adjudication;
  decidedBy: string;
  statuses: Record<string, MemoryStatus>;
}

/** The dispute's workflow ends without a decision: a record of it was erased. */
export interface DisputeVoided {
  disputeId: string;
  voided: true;
}

/** Sent by an erasure that erased a record of the dispute (after the dispute was closed in the store). */
export const disputeVoidedSignal = defineSignal('disputeVoided');
export const adjudicateUpdate = defineUpdate<AdjudicationResult, [AdjudicationInput]>('adjudicate');
export const disputeStateQuery = defineQuery<{
  state: 'open' | 'resolved' | 'void';
  stage: 'waiting' | 'reminded' | 'escalated';
}>('disputeState');
