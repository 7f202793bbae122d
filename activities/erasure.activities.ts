import { releaseCompletedRequest } from '../src/governance/erasure/completed-request.js';
import { erasureContext, type ErasureActivityDeps, type ErasureRef } from './erasure/erasure-context.js';
import { createFindingsActivities } from './erasure/findings.activities.js';
import { createPurgeActivities } from './erasure/purge.activities.js';
import { createTombstoneActivities } from './erasure/tombstone.activities.js';
import { createCompactActivities } from './erasure/compact.activities.js';
import { createScopeActivities } from './erasure/scope.activities.js';
import { createVerifyActivities } from './erasure/verify.activities.js';
import { createCertifyActivities } from './erasure/certify.activities.js';

export type { ErasureActivityDeps, ErasureRef } from './erasure/erasure-context.js';
export type { AuthoriseResult } from './erasure/scope.activities.js';

/**
 * The six steps of the deletion closure (scope, purge, verify: one file each) and the request's bookkeeping.
 * Every activity is idempotent (safe to retry after a crash at any point) and records its step, with
 * timestamps and counts, on the request.
 */
export function createErasureActivities(deps: ErasureActivityDeps) {
  const ctx = erasureContext(deps);
  async function request(ref: ErasureRef) {
    return ctx.request(ref);
  }
  return {
    ...createScopeActivities(deps, ctx),
    ...createTombstoneActivities(deps, ctx),
    ...createPurgeActivities(deps, ctx),
    ...createCompactActivities(deps, ctx),
    ...createVerifyActivities(deps, ctx),
    ...createCertifyActivities(deps, ctx),
    ...createFindingsActivities(deps, ctx),

    async setErasureState(
      ref: ErasureRef & { state: 'running' | 'partial' | 'completed'; note?: string },
    ): Promise<void> {
      await deps.requests.setState(ref.tenant, ref.requestId, ref.state, ref.note ?? null);
      if (ref.state === 'completed') {
        await releaseCompletedRequest(deps, ref.tenant, ref.requestId);
      }
    },

    /** A step kept failing: needs-operator, audited, the operator e-mailed with the runbook to follow. */
    async escalateToOperator(ref: ErasureRef & { step: string; errorType: string }): Promise<void> {
      await deps.requests.setState(
        ref.tenant,
        ref.requestId,
        'needs-operator',
        `step ${ref.step} failed (${ref.errorType})`,
      );
      await deps.audit.append({
        tenant: ref.tenant,
        actor: `erasure:${ref.requestId}`,
        action: 'erasure.needs-operator',
        target: ref.requestId,
        outcome: 'error',
        details: { step: ref.step, errorType: ref.errorType },
      });
      await deps.notifier.send({
        to: deps.operatorEmail,
        subject: `Lethe: erasure ${ref.requestId} needs an operator`,
        text: `Erasure request ${ref.requestId} (tenant ${ref.tenant}) is stuck at step "${ref.step}" (${ref.errorType}).\nFollow runbooks/stuck-erasure.md, then retry it: POST /v1/tenants/${ref.tenant}/erasure-requests/${ref.requestId}/retry (or lethe erasure retry ${ref.requestId}).`,
      });
    },

    /** E-mails the DPO: ids, states and counts only. */
    async notifyDpo(
      ref: ErasureRef & {
        kind: 'completed' | 'partial' | 'rejected' | 'deadline-approaching' | 'deadline-passed' | 'extended';
        certificateId?: string;
        dueAt?: string;
      },
    ): Promise<void> {
      const lines: Record<typeof ref.kind, string> = {
        completed: `Erasure request ${ref.requestId} is complete. Certificate: ${ref.certificateId ?? '-'}.`,
        partial: `Erasure request ${ref.requestId} is partial: records under legal hold were kept with restricted access. Certificate: ${ref.certificateId ?? '-'}. They will be erased when the hold is released.`,
        rejected: `Erasure request ${ref.requestId} was not authorised by policy.`,
        'deadline-approaching': `Erasure request ${ref.requestId} is due on ${ref.dueAt ?? '?'} and is not complete.`,
        'deadline-passed': `Erasure request ${ref.requestId} passed its due date (${ref.dueAt ?? '?'}) without completing.`,
        extended: `Erasure request ${ref.requestId} was extended; it is now due on ${ref.dueAt ?? '?'}.`,
      };
      await deps.notifier.send({
        to: deps.dpoEmail,
        subject: `Lethe: erasure ${ref.requestId} — ${ref.kind}`,
        text: `${lines[ref.kind]}\nTenant: ${ref.tenant}.`,
      });
    },

    /**
     * Records an extension of the GDPR deadline (at most two more months, with a reason): the totals the workflow's
     * clock holds after it, so that a retry after a partial write sets the same values rather than adding again.
     */
    async recordExtension(
      ref: ErasureRef & { months: number; reasonHash: string; dueAt: string; extensionMonths?: number },
    ): Promise<void> {
      const req = await request(ref);
      await deps.requests.update(ref.tenant, ref.requestId, {
        // Absent from a run scheduled before totals were sent.
        extensionMonths: ref.extensionMonths ?? req.extensionMonths + ref.months,
        dueAt: new Date(ref.dueAt),
        extensionReasonHash: ref.reasonHash,
      });
      await deps.audit.append({
        tenant: ref.tenant,
        actor: req.requester,
        action: 'erasure.extended',
        target: ref.requestId,
        outcome: 'ok',
        details: { months: ref.months, dueAt: ref.dueAt, reasonHash: ref.reasonHash },
        idempotencyKey: `erasure:${ref.requestId}:extend:${ref.dueAt}`,
      });
    },
  };
}
