/**
 * An erasure request's workflow as its callers and the workflow share it: input, outcome, signals, Updates and the
 * phase query.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { FindingsDecision } from '../../governance/erasure/copy-findings.js';
import { workflowContract } from './workflow-contract.js';

/** Input of an erasure workflow: ids only (the selector stays in the request store). */
export interface ErasureInput {
  tenant: string;
  requestId: string;
  /** ISO 8601: when the request was received; the GDPR month runs from here. */
  receivedAt: string;
}

export type ErasurePhase = 'running' | 'partial' | 'needs-operator' | 'needs-dpo' | 'completed' | 'rejected';

export interface ErasureOutcome {
  state: ErasurePhase;
  certificateIds: string[];
  erased: number;
  held: number;
}

/** A legal hold covering some of this request's records was released. */
export const holdReleasedSignal = defineSignal<[{ holdId: string }]>('holdReleased');
/** The operator fixed what made a step fail; retry it. */
export const operatorRetrySignal = defineSignal('operatorRetry');
/** The same, as an Update: exactly one of several operators retrying at once is accepted, the others are told. */
export const operatorRetryUpdate = defineUpdate<{ state: 'running' }, []>('retryStep');
export const erasurePhaseQuery = defineQuery<{ phase: ErasurePhase; dueAt: string; step: string }>('erasurePhase');
/** Extends the GDPR deadline by up to two more months in total; needs a reason. Answers the new due date. */
export const extendDeadlineUpdate = defineUpdate<{ dueAt: string }, [{ months: number; reasonHash: string }]>(
  'extendDeadline',
);
/**
 * The DPO's decision on copies of erased content found outside the closure: erase them too (`extend`), or certify
 * with them stated (`certify`). An Update: of two DPOs deciding at once, one is accepted and the other told.
 */
export const resolveFindingsUpdate = defineUpdate<
  { state: 'running' },
  [{ decision: FindingsDecision; reasonHash: string; decidedBy: string }]
>('resolveFindings');

/** An erasure request's one workflow, started when it is filed. */
export const erasureRequestWorkflow = workflowContract<ErasureInput, ErasureOutcome>()('erasureRequest');
