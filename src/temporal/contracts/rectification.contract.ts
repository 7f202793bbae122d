/**
 * A rectification request's workflow as its callers and the workflow share it: input, the decision Update, the state
 * query.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { workflowContract } from './workflow-contract.js';

export interface RectificationInput {
  tenant: string;
  requestId: string;
  /** Whoever wrote the record, and whoever filed the correction: neither may decide. */
  writers: string[];
  requester: string;
  /** When the reviewers are reminded, in ms after filing. */
  reminderMs: number;
}

export interface RectificationDecisionInput {
  reviewer: string;
  decision: 'approve' | 'reject';
  /** Keyed hash of the reviewer's reason (the words are not kept). */
  reasonHash: string;
}

export interface RectificationResult extends RectificationOutcome {
  decidedBy: string;
  /** The erasure of the inaccurate value, when one was filed. */
  erasureRequestId: string | null;
}

export const decideRectificationUpdate = defineUpdate<RectificationResult, [RectificationDecisionInput]>(
  'decideRectification',
);
export const rectificationStateQuery = defineQuery<{ state: 'open' | 'deciding' | 'decided'; reminded: boolean }>(
  'rectificationState',
);

/** What a decision did: ids and counts only (this goes into the workflow's history). */
export interface RectificationOutcome {
  state: 'applied' | 'rejected' | 'void';
  correctedId: string | null;
  /** Copies of the inaccurate value besides the named record that the correction superseded. */
  siblings: number;
  stale: number;
  /** Records the erasure of the inaccurate value is to reach (empty: nothing to erase). */
  toErase: string[];
}

/** A rectification request's one workflow: wait for a reviewer, then apply or reject. */
export const rectificationRequestWorkflow = workflowContract<RectificationInput, RectificationResult>()(
  'rectificationRequest',
);
