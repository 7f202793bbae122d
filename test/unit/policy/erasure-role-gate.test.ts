/**
 * Who may erase is asked twice on the way in: the route's role gate (`ACTION_ROLES['erasure.request']`) and then the
 * erasure-authorisation policy at step 3. The two must name the same people: a role the gate admits that the policy
 * never allows files requests that are always rejected at step 3, and a role the policy allows that the gate refuses
 * is a rule no one can reach. This test holds them to each other, role by role.
 */
import { describe, expect, it } from 'vitest';
import { ACTION_ROLES } from '../../../src/governance/auth/permissions.js';
import { ROLES } from '../../../src/governance/auth/principal.js';
import { evaluatePolicy } from '../../../src/governance/policy/evaluate.js';
import { loadPolicies, POLICIES_DIR } from '../../../src/governance/policy/policy-set.js';
import { LEGAL_GROUNDS, SelectorSchema } from '../../../src/governance/erasure/erasure-request.js';

/** Every way a request can name its records, read off the schema that parses them. */
const SELECTOR_KINDS = SelectorSchema.options.map((option) => Object.keys(option.shape)[0]!);

describe('who may erase', () => {
  const policy = loadPolicies(POLICIES_DIR).get('erasure-authorisation')!;

  it('is the same set of roles at the route and in the policy', () => {
    const policyAllows = ROLES.filter((role) =>
      LEGAL_GROUNDS.some((legalGround) =>
        SELECTOR_KINDS.some(
          (selectorKind) =>
            evaluatePolicy(policy, { requesterRoles: [role], legalGround, selectorKind }).outcome === 'allow',
        ),
      ),
    );
    expect(policyAllows).toEqual(
      ROLES.filter((role) => (ACTION_ROLES['erasure.request'] as readonly string[]).includes(role)),
    );
    expect(policyAllows.length).toBeGreaterThan(0);
  });
});
