import type { AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import type { Principal } from '../../../src/governance/auth/principal.js';
import type { PolicyDocument } from '../../../src/governance/policy/evaluate.js';
import { resolveReader, type ReadRequest, type Reader } from '../../../src/governance/read/reader.js';
import type { RestrictionStore } from '../../../src/governance/rights/restriction-store.js';
import { DomainError, ErrorType } from '../../../src/shared/errors.js';

/**
 * The two read policies every reading route resolves its reader from, the restrictions and objections it applies,
 * and the audit log refusals go to.
 */
export interface ReadingDeps {
  rules: { read: PolicyDocument; scope: PolicyDocument };
  audit: AuditLog;
  restrictions: Pick<RestrictionStore, 'snapshot'>;
}

/**
 * The reader for this call (see `governance/read/reader.ts`), with the tenant's active restrictions and objections
 * resolved once for the whole call, however many records it judges: one equality lookup of the tenant's generation
 * at each call (the set itself is read again only when a filing or lift changed it), so a filing or a lift takes
 * effect on the next read in every API process. A purpose the token does not grant, or that grants nothing at all,
 * is refused (403, naming `purpose`) and the refusal is audited with the policy's id and version: this depends on
 * the token and the purpose only, never on a record, so it tells the caller nothing about what exists.
 */
export async function requireReader(
  deps: ReadingDeps,
  principal: Principal,
  request: ReadRequest,
  what: string,
): Promise<Reader> {
  const reader = resolveReader(deps.rules, principal, request);
  if (reader.grants.length > 0) return { ...reader, restrictions: await deps.restrictions.snapshot(principal.tenant) };
  await deps.audit.append({
    tenant: principal.tenant,
    actor: principal.id,
    action: 'read.refused',
    outcome: 'refused',
    details: {
      what,
      purpose: reader.purpose,
      ...(reader.ungranted ? { refusedBy: 'token-purposes' } : {}),
      policyId: reader.policies.read.id,
      policyVersion: reader.policies.read.version,
    },
  });
  if (reader.ungranted)
    throw new DomainError(
      ErrorType.Forbidden,
      `purpose: the token does not grant reading for "${reader.purpose}"`,
      'purpose',
    );
  throw new DomainError(
    ErrorType.PolicyDenied,
    `purpose: the read policy allows no record to be read for "${reader.purpose}" by these roles`,
    'purpose',
  );
}

/**
 * A record the reader may not see answers exactly as a missing one. The refusal of a record that exists is still
 * audited (target id, purpose, policy), where the DPO and the auditor can see it and the caller cannot.
 */
export async function notVisible(
  deps: ReadingDeps,
  reader: Reader,
  kind: string,
  existing: string | null,
): Promise<DomainError> {
  if (existing !== null) {
    await deps.audit.append({
      tenant: reader.principal.tenant,
      actor: reader.principal.id,
      action: 'read.refused',
      target: existing,
      outcome: 'refused',
      details: {
        what: kind,
        purpose: reader.purpose,
        policyId: reader.policies.read.id,
        policyVersion: reader.policies.read.version,
      },
    });
  }
  return new DomainError(ErrorType.NotFound, `${kind}: not found`, 'id');
}
