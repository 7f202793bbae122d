import type { Principal } from '../auth/principal.js';
import type { TenantMacs } from '../../substrate/fingerprint.js';
export { erasureWorkflowId } from '../../shared/workflow-ids.js';
import { selectorKind, type ErasureFiling, type ErasureRequest } from './erasure-request.js';

/**
 * A request's id: from the client's request key, or else from the selector's keyed hash and the legal ground, keyed
 * under the tenant's key (a certificate or audit export naming it confirms no guessed key). `generation` counts
 * the requests filed again after an earlier one finished. Derived once, at filing.
 */
export function erasureRequestId(
  macs: TenantMacs,
  tenant: string,
  filing: Pick<ErasureFiling, 'requestKey' | 'legalGround'>,
  selectorHash: string,
  generation: number,
): string {
  const base = (
    filing.requestKey !== undefined
      ? macs.of(tenant, 'erasure-request-key', filing.requestKey)
      : macs.of(tenant, 'erasure-request', selectorHash, filing.legalGround)
  ).slice(0, 24);
  return `era_${base}${generation > 1 ? `-${generation}` : ''}`;
}

/** A filed erasure request as first stored: received now, due in a month, nothing done yet. Pure. */
export function newErasureRequest(
  at: { id: string; principal: Pick<Principal, 'tenant' | 'id' | 'roles'>; receivedAt: Date },
  filing: Pick<ErasureFiling, 'selector' | 'legalGround'>,
  selectorHash: string,
): ErasureRequest {
  const dueAt = new Date(at.receivedAt);
  dueAt.setUTCMonth(dueAt.getUTCMonth() + 1);
  return {
    _id: at.id,
    tenant: at.principal.tenant,
    selector: filing.selector,
    selectorKind: selectorKind(filing.selector),
    selectorHash,
    legalGround: filing.legalGround,
    requester: at.principal.id,
    requesterRoles: at.principal.roles,
    receivedAt: at.receivedAt,
    dueAt,
    extensionMonths: 0,
    extensionReasonHash: null,
    state: 'received',
    steps: [],
    progress: { purged: 0, total: 0 },
    counts: {},
    holdIds: [],
    certificateIds: [],
    operatorNote: null,
    updatedAt: at.receivedAt,
  };
}
