import type { AuditLog } from '../../../src/governance/audit/audit-log.port.js';
import type { Principal } from '../../../src/governance/auth/principal.js';
import { evaluatePolicy, type PolicyDocument } from '../../../src/governance/policy/evaluate.js';
import { DomainError, ErrorType } from '../../../src/shared/errors.js';

/**
 * The finer question a subject-rights route asks after the role gate: may this principal do `action` under the
 * policy? Every refusal is audited, and every allowed action that changes something; an allowed read is not (it
 * would flood the chain). A refusal is a 403 naming the policy, never the rule's facts.
 */
/** Whether the policy allows this principal `action`, asked without an audit entry: for reads that several actions open. */
export function policyAllows(
  policy: PolicyDocument,
  principal: Principal,
  action: string,
  facts: Record<string, string> = {},
): boolean {
  return evaluatePolicy(policy, { actorRoles: principal.roles, action, ...facts }).outcome === 'allow';
}

export function createPolicyGate(deps: {
  policy: PolicyDocument;
  audit: AuditLog;
  /** The audit action's prefix, e.g. `subject-access`: entries read `<prefix>.<action>.authorised|refused`. */
  prefix: string;
  /** What the action is on, for the refusal's message, e.g. `an access request`. */
  noun: (facts: Record<string, string>) => string;
  /** Actions that only read: allowed ones are not audited. */
  reads: readonly string[];
}) {
  return async function authorise(principal: Principal, action: string, facts: Record<string, string> = {}) {
    const decision = evaluatePolicy(deps.policy, { actorRoles: principal.roles, action, ...facts });
    const allowed = decision.outcome === 'allow';
    if (allowed && deps.reads.includes(action)) return;
    await deps.audit.append({
      tenant: principal.tenant,
      actor: principal.id,
      action: `${deps.prefix}.${action}.${allowed ? 'authorised' : 'refused'}`,
      outcome: allowed ? 'ok' : 'refused',
      details: { policyId: decision.policyId, policyVersion: decision.policyVersion, rule: decision.ruleId, ...facts },
    });
    if (!allowed)
      throw new DomainError(
        ErrorType.PolicyDenied,
        `authorization: policy ${decision.policyId} does not allow this principal to ${action} ${deps.noun(facts)}`,
        'authorization',
      );
  };
}
