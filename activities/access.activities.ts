import type { AuditLog } from '../src/governance/audit/audit-log.port.js';
import type { CertificateSigner } from '../src/governance/certificates/signing.js';
import type { Notifier } from '../src/governance/notifications/notifier.js';
import { buildAccessPackageBody, type AccessPackageDeps } from '../src/governance/rights/access-package-builder.js';
import { signAccessPackage } from '../src/governance/rights/access-request.js';
import type { AccessStore } from '../src/governance/rights/access-store.js';
import { DomainError, ErrorType } from '../src/shared/errors.js';

export interface AccessActivityDeps extends AccessPackageDeps {
  access: AccessStore;
  audit: AuditLog;
  signer: CertificateSigner;
  notifier: Notifier;
  dpoEmail: string;
}

export interface AccessRef {
  tenant: string;
  requestId: string;
}

/** What the workflow keeps of a built package: counts and dates, never content. */
export interface BuiltPackage {
  counts: Record<string, number>;
  readyAt: string;
  expiresAt: string;
}

/**
 * The steps of an access request. Each is idempotent: a retried build replaces the package with one built from the
 * same records (signed again), and erasing a package that is gone erases nothing.
 */
export function createAccessActivities(deps: AccessActivityDeps) {
  const requestOf = async ({ tenant, requestId }: AccessRef) => {
    const request = await deps.access.get(tenant, requestId);
    if (!request) throw new DomainError(ErrorType.NotFound, `no access request ${requestId}`);
    return request;
  };
  return {
    async buildAccessPackage(ref: AccessRef & { deliveryWindowMs: number }): Promise<BuiltPackage> {
      const request = await requestOf(ref);
      if (request.state === 'ready' && request.readyAt && request.expiresAt)
        return {
          counts: request.counts,
          readyAt: request.readyAt.toISOString(),
          expiresAt: request.expiresAt.toISOString(),
        };
      if (request.state === 'expired')
        throw new DomainError(ErrorType.Conflict, `access request ${ref.requestId} has expired`);
      const selector = await deps.access.selectorOf(ref.tenant, ref.requestId);
      if (!selector) throw new DomainError(ErrorType.NotFound, `the selector of ${ref.requestId} is gone`);
      await deps.access.update(ref.tenant, ref.requestId, { state: 'building' });
      const issuedAt = new Date();
      const { body, recordIds } = await buildAccessPackageBody(deps, {
        tenant: ref.tenant,
        requestId: ref.requestId,
        selector,
        issuedAt,
      });
      const signed = signAccessPackage(body, deps.signer);
      await deps.access.putPackage(ref.tenant, ref.requestId, signed, recordIds);
      const expiresAt = new Date(issuedAt.getTime() + ref.deliveryWindowMs);
      await deps.access.update(ref.tenant, ref.requestId, {
        state: 'ready',
        counts: body.counts,
        packageHash: signed.signature.bodySha256,
        readyAt: issuedAt,
        expiresAt,
      });
      await deps.audit.append({
        tenant: ref.tenant,
        actor: 'system',
        action: 'subject-access.package-built',
        outcome: 'ok',
        target: ref.requestId,
        details: { ...body.counts, packageSha256: signed.signature.bodySha256, keyId: signed.signature.keyId },
        idempotencyKey: `access:${ref.requestId}:built`,
      });
      return { counts: body.counts, readyAt: issuedAt.toISOString(), expiresAt: expiresAt.toISOString() };
    },

    async notifyAccessReady(ref: AccessRef & { expiresAt: string; records: number }): Promise<void> {
      await deps.notifier.send({
        to: deps.dpoEmail,
        subject: `[Lethe] access package ${ref.requestId} ready`,
        text:
          `The access package of request ${ref.requestId} (tenant ${ref.tenant}) is ready: ${ref.records} records.\n` +
          `Download it before ${ref.expiresAt}; it is erased then.\n`,
      });
    },

    async expireAccessPackage(ref: AccessRef): Promise<{ erased: boolean }> {
      const erased = await deps.access.erasePackage(ref.tenant, ref.requestId);
      await deps.access.update(ref.tenant, ref.requestId, { state: 'expired' });
      await deps.audit.append({
        tenant: ref.tenant,
        actor: 'system',
        action: 'subject-access.package-erased',
        outcome: 'ok',
        target: ref.requestId,
        details: { erased },
        idempotencyKey: `access:${ref.requestId}:erased`,
      });
      return { erased };
    },

    async failAccessRequest(ref: AccessRef & { errorType: string }): Promise<void> {
      await deps.access.erasePackage(ref.tenant, ref.requestId);
      await deps.access.update(ref.tenant, ref.requestId, { state: 'failed' });
      await deps.audit.append({
        tenant: ref.tenant,
        actor: 'system',
        action: 'subject-access.failed',
        outcome: 'error',
        target: ref.requestId,
        details: { errorType: ref.errorType },
        idempotencyKey: `access:${ref.requestId}:failed`,
      });
    },
  };
}
