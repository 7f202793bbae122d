import type { AuditLog } from '../../governance/audit/audit-log.port.js';
import type { Principal } from '../../governance/auth/principal.js';
import type { PolicyDocument } from '../../governance/policy/evaluate.js';
import { readAccess, type ReadAccess } from '../../governance/policy/read-purpose.js';
import { DomainError, ErrorType } from '../../shared/errors.js';

/**
 * The read policy's answer for this reader and purpose; a purpose that admits no sensitivity at all is refused
 * (403, naming `purpose`) and the refusal is audited with the policy's id and version.
 */
export async function requireReadAccess(
  deps: { readPolicy: PolicyDocument; audit: AuditLog },
  principal: Principal,
  purpose: string | undefined,
  what: string,
): Promise<ReadAccess> {
  const access = readAccess(deps.readPolicy, principal.roles, purpose);
  if (access.sensitivities.length > 0) return access;
  await deps.audit.append({
    tenant: principal.tenant,
    actor: principal.id,
    action: 'read.refused',
    outcome: 'refused',
    details: { what, purpose: access.purpose, policyId: access.policy.id, policyVersion: access.policy.version },
  });
  throw new DomainError(
    ErrorType.PolicyDenied,
    `purpose: the read policy allows no memory to be read for "${access.purpose}" by these roles`,
    'purpose',
  );
}
