import type { Client } from '@temporalio/client';
import { startRequestWorkflow } from './start-request-workflow.js';
import type { AuditLog } from '../governance/audit/audit-log.port.js';
import type { Principal } from '../governance/auth/principal.js';
import { selectorKind } from '../governance/erasure/erasure-request.js';
import { receivedAccessRequest } from '../governance/rights/access-request.js';
import type { AccessFiling, AccessPackage, AccessRequest } from '../governance/rights/access-request.js';
import type { AccessStore } from '../governance/rights/access-store.js';
import type { Fingerprinter, TenantMacs } from '../substrate/fingerprint.js';
import { canonicalJson } from '../shared/canonical-json.js';
import { DomainError, ErrorType } from '../shared/errors.js';
import type { AccessInput } from './contracts/access-request.contract.js';
import { accessRequestWorkflow } from './contracts/access-request.contract.js';

export function accessWorkflowId(tenant: string, requestId: string): string {
  return `access-${tenant}-${requestId}`;
}

/** A request's id, from the client's request key keyed under the tenant's key: filing it again finds the same one. */
export function accessRequestId(macs: TenantMacs, tenant: string, requestKey: string): string {
  return `acc_${macs.of(tenant, 'access-request-key', requestKey).slice(0, 24)}`;
}

/** Files access requests (idempotently), starts one workflow per request, and hands packages to the DPO. */
export function createAccessGateway(deps: {
  access: AccessStore;
  audit: AuditLog;
  client: Client;
  taskQueue: string;
  fingerprints: Fingerprinter;
  macs: TenantMacs;
  deliveryWindowMs: number;
}) {
  async function start(request: AccessRequest): Promise<void> {
    const input: AccessInput = {
      tenant: request.tenant,
      requestId: request._id,
      deliveryWindowMs: deps.deliveryWindowMs,
    };
    await startRequestWorkflow(
      deps.client,
      accessRequestWorkflow,
      {
        taskQueue: deps.taskQueue,
        workflowId: accessWorkflowId(request.tenant, request._id),
        tenant: request.tenant,
        requestId: request._id,
        kind: 'access',
      },
      input,
    );
  }

  /** What the request's keyed hash covers: the selector, and the subject filed beside it when there is one. */
  const filed = (filing: AccessFiling) =>
    canonicalJson(
      filing.subjectId === undefined ? filing.selector : { selector: filing.selector, subjectId: filing.subjectId },
    );

  return {
    /** The same request key returns the same request (and starts nothing new); a new key files a new request. */
    async file(principal: Principal, filing: AccessFiling): Promise<{ request: AccessRequest; created: boolean }> {
      const { request, created } = await deps.access.create(
        receivedAccessRequest(
          {
            _id: accessRequestId(deps.macs, principal.tenant, filing.requestKey),
            tenant: principal.tenant,
            selectorKind: selectorKind(filing.selector),
            selectorHash: deps.fingerprints.of('access-selector', principal.tenant, filed(filing)),
            requester: principal.id,
          },
          new Date(),
        ),
        filing.selector,
        filing.subjectId,
      );
      if (
        !created &&
        !deps.fingerprints.all('access-selector', principal.tenant, filed(filing)).includes(request.selectorHash)
      )
        // The same key names one filing: another selector or subject under it is a mistake, not a retry.
        throw new DomainError(
          ErrorType.Conflict,
          'requestKey: already used for another selector or subject',
          'requestKey',
        );
      // Appended on a retry too, under one key: a filing whose entry was not written gets it now, once.
      await deps.audit.append({
        tenant: principal.tenant,
        actor: request.requester,
        action: 'subject-access.filed',
        outcome: 'ok',
        target: request._id,
        details: { selectorKind: request.selectorKind, selectorHash: request.selectorHash },
        idempotencyKey: `access:${request._id}:filed`,
      });
      await start(request);
      return { request, created };
    },
    get: (tenant: string, id: string) => deps.access.get(tenant, id),
    list: (tenant: string, limit: number) => deps.access.list(tenant, limit),
    withSelectorHashes: (tenant: string, hashes: readonly string[]) => deps.access.withSelectorHashes(tenant, hashes),
    /** The signed package, for the DPO; every download is audited. Null while it is not built, or once erased. */
    async download(principal: Principal, id: string): Promise<AccessPackage | null> {
      const pkg = await deps.access.getPackage(principal.tenant, id);
      if (!pkg) return null;
      await deps.access.countDownload(principal.tenant, id);
      await deps.audit.append({
        tenant: principal.tenant,
        actor: principal.id,
        action: 'subject-access.downloaded',
        outcome: 'ok',
        target: id,
        details: { packageSha256: pkg.signature.bodySha256, records: pkg.records.length },
      });
      return pkg;
    },
  };
}

export type AccessGateway = ReturnType<typeof createAccessGateway>;
