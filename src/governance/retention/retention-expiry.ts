/**
 * Retention at admission: the period from `policies/retention.json` (an ISO 8601 duration per kind, namespace,
 * sensitivity and jurisdiction) added to the record's transaction time. Pure, no I/O.
 */
import { evaluatePolicy, type PolicyDecision, type PolicyDocument } from '../policy/evaluate.js';
import { addIsoDuration, approximateMs, isIsoDuration } from '../policy/iso-duration.js';
import { expiryBucketOf } from './expiry-bucket.js';

/** The facts the retention policy reads (its declared variables). */
export interface RetentionFacts {
  kind: string;
  namespace: string;
  sensitivity: string;
  jurisdiction: string;
}

export interface RetentionDecision extends PolicyDecision {
  /** The ISO 8601 period applied (the decided outcome, or the shortest one if that is not a duration). */
  period: string;
  expiresAt: Date;
}

/** The shortest period the policy can produce: what an unclassified or malformed outcome falls back to. */
export function shortestPeriod(policy: PolicyDocument): string {
  const periods = [...policy.outcomes, policy.default].filter(isIsoDuration);
  if (periods.length === 0) throw new RangeError(`policy "${policy.id}" has no ISO 8601 duration among its outcomes`);
  return periods.reduce((a, b) => (approximateMs(b) < approximateMs(a) ? b : a));
}

export function retentionDecision(policy: PolicyDocument, facts: RetentionFacts, recordedAt: Date): RetentionDecision {
  const decision = evaluatePolicy(policy, { ...facts });
  // Storage limitation: an outcome that is not a period must never mean "keep forever".
  const period = isIsoDuration(decision.outcome) ? decision.outcome : shortestPeriod(policy);
  return { ...decision, period, expiresAt: addIsoDuration(recordedAt, period) };
}

/** When a record admitted at `recordedAt` with these facts expires. */
export function retentionExpiry(policy: PolicyDocument, facts: RetentionFacts, recordedAt: Date): Date {
  return retentionDecision(policy, facts, recordedAt).expiresAt;
}

/**
 * The record fields retention sets at admission: `expiresAt`, and `expiryBucket` (its UTC hour), the equality key
 * the retention sweep pages by (FerretDB cannot serve a range on `expiresAt`).
 */
export function retentionFields(
  policy: PolicyDocument,
  facts: RetentionFacts,
  recordedAt: Date,
): { expiresAt: Date; expiryBucket: string } {
  const expiresAt = retentionExpiry(policy, facts, recordedAt);
  return { expiresAt, expiryBucket: expiryBucketOf(expiresAt) };
}
