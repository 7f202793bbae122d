/**
 * Whose memories a reader may retrieve (`policies/memory-scope.json`), as owner scopes to push into the index
 * query. Pure: the answer becomes a `terms` filter inside both halves of the hybrid query.
 */
import type { Principal } from '../auth/principal.js';
import { principalScope } from '../../substrate/model/records.js';
import { evaluatePolicy, type PolicyDocument } from './evaluate.js';

export interface ReadScope {
  /** `all` for a tenant-wide duty; otherwise the reader's own scope and the tenant's shared one. */
  scopes: string[] | 'all';
  policy: { id: string; version: number; rule: string };
}

/** `purposes`: what the reader declared, or the duties of its roles (as the read policy resolved them). */
export function readScope(policy: PolicyDocument, principal: Principal, purposes: readonly string[]): ReadScope {
  for (const purpose of purposes) {
    const decision = evaluatePolicy(policy, { roles: [...principal.roles], purpose });
    if (decision.outcome === 'tenant-wide') {
      return { scopes: 'all', policy: { id: policy.id, version: policy.version, rule: decision.ruleId } };
    }
  }
  return {
    scopes: [principalScope(principal.id), 'tenant'],
    policy: { id: policy.id, version: policy.version, rule: 'default' },
  };
}
