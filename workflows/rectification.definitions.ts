import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { RectificationOutcome } from '../activities/rectification.activities.js';

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
