import { evaluatePolicy, type PolicyDocument } from '../policy/evaluate.js';
import { isoDurationToMs } from '../policy/iso-duration.js';

/** When a high-impact write's reviewers are reminded, when it escalates, and when the default applies (ms after writing). */
export interface ReviewPlan {
  reminderMs: number;
  escalationMs: number;
  finalMs: number;
  /** The decision applied at the final deadline, and the policy that says so. */
  defaultDecision: 'approve' | 'reject';
  policy: { slaId: string; slaVersion: number; timeoutId: string; timeoutVersion: number };
}

/** Pure: the review plan for a record of this sensitivity, from the review-sla and review-timeout policies. */
export function reviewPlan(sla: PolicyDocument, timeout: PolicyDocument, sensitivity: string): ReviewPlan {
  const at = (stage: string) => isoDurationToMs(evaluatePolicy(sla, { stage, sensitivity }).outcome);
  const reminderMs = at('reminder');
  const escalationMs = Math.max(at('escalation'), reminderMs);
  const finalMs = Math.max(at('final'), escalationMs);
  const decision = evaluatePolicy(timeout, {}).outcome;
  return {
    reminderMs,
    escalationMs,
    finalMs,
    defaultDecision: decision === 'approve' ? 'approve' : 'reject',
    policy: { slaId: sla.id, slaVersion: sla.version, timeoutId: timeout.id, timeoutVersion: timeout.version },
  };
}
