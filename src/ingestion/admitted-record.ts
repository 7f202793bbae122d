import { evaluatePolicy, type PolicyDecision, type PolicyDocument } from '../governance/policy/evaluate.js';
import type { TenantMacs } from '../substrate/fingerprint.js';
import { contentHashOf } from '../substrate/content-hash.js';
import { principalScope, type MemoryRecord } from '../substrate/model/records.js';
import { retentionDecision, type RetentionDecision } from '../governance/retention/retention-expiry.js';
import { expiryBucketOf } from '../governance/retention/expiry-bucket.js';
import type { MemoryInput } from './write-schemas.js';
import type { DerivationOutcome } from './derivation-admission.js';
import type { InheritedTrust } from './input-trust.js';

/**
 * The record a validated memory becomes at admission, pure: its status from the impact policy (low → active,
 * otherwise candidate), its expiry from the retention policy, every governance field set.
 */
export function admittedRecord(
  policies: { impact: PolicyDocument; retention: PolicyDocument },
  at: {
    tenant: string;
    writer: string;
    id: string;
    eventIds: string[];
    at: Date;
    derivation?: DerivationOutcome;
    /** What it inherits from its inputs (taints, quarantine); absent: nothing. */
    inherited?: InheritedTrust;
    /** The staged batch admitting it (absent: written outside an admission). */
    stageId?: string;
  },
  m: MemoryInput,
  /** The tenants' keys: the content hash is stored keyed (`content-hash.ts`). */
  macs: TenantMacs,
): { record: MemoryRecord; decision: PolicyDecision; retention: RetentionDecision } {
  const decision = evaluatePolicy(policies.impact, {
    kind: m.kind,
    namespace: m.namespace,
    sensitivity: m.sensitivity,
    trustTier: m.trustTier,
    purpose: m.purpose,
    attribute: m.attribute ?? '',
  });
  const signOff = at.derivation?.effect === 'sign-off';
  const quarantine = at.inherited?.quarantine ?? [];
  const taint = at.inherited?.taint ?? [];
  const status = decision.outcome === 'low' && !signOff && quarantine.length === 0 ? 'active' : 'candidate';
  const repaired =
    at.derivation?.effect === 'admit' && at.derivation.record.mode === 'enforce'
      ? at.derivation.verdict.repairedEvidenceIds
      : [];
  const retention = retentionDecision(
    policies.retention,
    { kind: m.kind, namespace: m.namespace, sensitivity: m.sensitivity, jurisdiction: m.jurisdiction },
    at.at,
  );
  const record: MemoryRecord = {
    _id: at.id,
    tenant: at.tenant,
    namespace: m.namespace,
    subjects: m.subjects,
    kind: m.kind,
    attribute: m.attribute ?? null,
    content: m.content,
    contentHash: contentHashOf(macs, at.tenant, m.content),
    hashKeyId: macs.keyId,
    validFrom: new Date(m.validFrom),
    validTo: m.validTo ? new Date(m.validTo) : null,
    recordedAt: at.at,
    policy: {
      purpose: m.purpose,
      sensitivity: m.sensitivity,
      jurisdiction: m.jurisdiction,
      // The writer's class if it named one, otherwise the retention rule that set the period.
      retentionClass: m.retentionClass ?? `${retention.policyId}:${retention.ruleId}`,
    },
    provenance: {
      eventIds: at.eventIds,
      parentIds: m.provenance.parentIds,
      derivationRule: m.provenance.derivationRule,
      modelVersion: m.provenance.modelVersion ?? null,
      promptVersion: m.provenance.promptVersion ?? null,
      ...(repaired.length > 0 ? { repairedEventIds: repaired } : {}),
    },
    trustTier: m.trustTier,
    confidence: m.confidence,
    version: 1,
    status,
    writtenBy: at.writer,
    scope: m.scope === 'tenant' ? 'tenant' : principalScope(at.writer),
    expiresAt: retention.expiresAt,
    expiryBucket: expiryBucketOf(retention.expiresAt),
    highImpact: decision.outcome !== 'low',
    // A quarantine, or a sign-off the derivation audit asked for, says so by code or label (the obligations are on
    // the record); otherwise the impact policy's reason.
    statusReason:
      decision.outcome === 'low' && quarantine.length > 0
        ? `quarantine: ${quarantine.join(', ')}`
        : signOff && decision.outcome === 'low'
          ? `derivation audit: ${at.derivation!.verdict.label}`
          : decision.reason,
    ...(taint.length > 0 ? { taint } : {}),
    ...(quarantine.length > 0 ? { quarantinedFor: quarantine } : {}),
    ...(at.derivation ? { derivation: at.derivation.record } : {}),
    ...(at.stageId ? { stageId: at.stageId } : {}),
    updatedAt: at.at,
  };
  return { record, decision, retention };
}
