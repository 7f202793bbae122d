import type { AuditEntry } from '../src/governance/audit/audit-log.port.js';
import { issueReceipt } from '../src/governance/rights/receipt.js';
import type { ReceiptStore } from '../src/governance/rights/receipt-store.js';
import type { AuditLog } from '../src/governance/audit/audit-log.port.js';
import type { CertificateSigner } from '../src/governance/certificates/signing.js';
import type { Notifier } from '../src/governance/notifications/notifier.js';
import { buildAccessPackageBody, type AccessPackageDeps } from '../src/governance/rights/access-package-builder.js';
import { signAccessPackage, subjectsAnswered } from '../src/governance/rights/access-request.js';
import type { AccessStore } from '../src/governance/rights/access-store.js';
import { DomainError, ErrorType } from '../src/shared/errors.js';

/** Builds in one attempt of the activity before an erasure racing each of them hands over to its retries. */
const BUILD_ATTEMPTS = 3;

/**
 * How far apart the clocks of the process building a package and of an erasure's worker may be: purge notes this
 * much older than the build's start are still checked against it (a wider window only costs reading more notes).
 */
const CLOCK_SKEW_MS = 5 * 60_000;

export interface AccessActivityDeps extends AccessPackageDeps {
  access: AccessStore;
  receipts: ReceiptStore;
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

  /**
   * The answered request's signed receipt, anchored at the audit entry of the built package; its counts and digest
   * are that entry's, so a retried build that made another package cannot make them disagree.
   */
  async function issueAccessReceipt(ref: AccessRef, entry: AuditEntry, expiresAt: Date): Promise<void> {
    const request = await requestOf(ref);
    const counted = Object.entries(entry.details).filter((e): e is [string, number] => typeof e[1] === 'number');
    await deps.receipts.put(
      issueReceipt(
        {
          tenant: ref.tenant,
          right: 'access',
          requestId: ref.requestId,
          state: 'ready',
          requester: request.requester,
          receivedAt: request.receivedAt.toISOString(),
          dueAt: request.dueAt.toISOString(),
          closedAt: entry.at,
          outcome: {
            ...Object.fromEntries(counted),
            packageSha256: String(entry.details.packageSha256 ?? ''),
            packageErasedBy: expiresAt.toISOString(),
          },
        },
        entry,
        deps.signer,
      ),
    );
  }

  /** The built package's audit entry; a retry gets the entry already written under the same key. */
  const recordBuilt = (ref: AccessRef, counts: Record<string, number>, packageSha256: string, keyId: string) =>
    deps.audit.append({
      tenant: ref.tenant,
      actor: 'system',
      action: 'subject-access.package-built',
      outcome: 'ok',
      target: ref.requestId,
      details: { ...counts, packageSha256, keyId },
      idempotencyKey: `access:${ref.requestId}:built`,
    });

  return {
    async buildAccessPackage(ref: AccessRef & { deliveryWindowMs: number }): Promise<BuiltPackage> {
      const request = await requestOf(ref);
      if (request.state === 'ready' && request.readyAt && request.expiresAt) {
        // A retry after the package was recorded ready: write what a crash may have left out, its entry and its
        // receipt (anchored under a checkpoint as it is stored), once each.
        if (request.packageHash && !(await deps.receipts.get(ref.tenant, ref.requestId))) {
          const entry = await recordBuilt(ref, request.counts, request.packageHash, deps.signer.keyId);
          await issueAccessReceipt(ref, entry, request.expiresAt);
        }
        return {
          counts: request.counts,
          readyAt: request.readyAt.toISOString(),
          expiresAt: request.expiresAt.toISOString(),
        };
      }
      if (request.state === 'expired')
        throw new DomainError(ErrorType.Conflict, `access request ${ref.requestId} has expired`);
      await deps.access.update(ref.tenant, ref.requestId, { state: 'building' });
      for (let attempt = 1; ; attempt++) {
        // An erasure of the subject shreds the selector with any package it finds: nothing is left to answer from.
        const filing = await deps.access.filingOf(ref.tenant, ref.requestId);
        if (!filing)
          throw new DomainError(
            ErrorType.NotFound,
            `the selector of ${ref.requestId} is gone (erased with its records)`,
          );
        const issuedAt = new Date();
        // Every record read below that an erasure purges from now on is in a purge note written at or after this.
        const since = new Date(issuedAt.getTime() - CLOCK_SKEW_MS);
        const { body, recordIds } = await buildAccessPackageBody(deps, {
          tenant: ref.tenant,
          requestId: ref.requestId,
          selector: filing.selector,
          about: subjectsAnswered(filing.selector, filing.subjectId),
          issuedAt,
        });
        const signed = signAccessPackage(body, deps.signer);
        await deps.access.putPackage(ref.tenant, ref.requestId, signed, recordIds);
        // An erasure purges rows, notes their ids, then looks for packages holding them. Had it purged one of these
        // records after the read above and looked before the store, it found no package, and this one would keep the
        // erased content; but then its note was written before this check, which finds it, and the build starts
        // again. A note written after this check comes from an erasure that finds the stored package and erases it.
        if ((await deps.access.purgedSince(ref.tenant, since, recordIds)).length === 0) {
          const expiresAt = new Date(issuedAt.getTime() + ref.deliveryWindowMs);
          await deps.access.update(ref.tenant, ref.requestId, {
            state: 'ready',
            counts: body.counts,
            packageHash: signed.signature.bodySha256,
            readyAt: issuedAt,
            expiresAt,
          });
          const entry = await recordBuilt(ref, body.counts, signed.signature.bodySha256, signed.signature.keyId);
          await issueAccessReceipt(ref, entry, expiresAt);
          return { counts: body.counts, readyAt: issuedAt.toISOString(), expiresAt: expiresAt.toISOString() };
        }
        await deps.access.discardPackage(ref.tenant, ref.requestId);
        // Erasures that keep landing mid-build: the activity's retries (with their backoff) take over.
        if (attempt >= BUILD_ATTEMPTS)
          throw new DomainError(
            ErrorType.Contended,
            `records of ${ref.requestId} were erased during ${attempt} builds`,
          );
      }
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
