import fc from 'fast-check';
import jsonLogic from 'json-logic-js';
import { describe, expect, it } from 'vitest';
import {
  evaluatePolicy,
  validateFacts,
  type Facts,
  type PolicyDocument,
} from '../../../src/governance/policy/evaluate.js';
import { loadPolicies, POLICIES_DIR } from '../../../src/governance/policy/policy-set.js';
import { policyWith, rule } from './policy-fixtures.js';

const policies = [...loadPolicies(POLICIES_DIR).values()];

/** Every string literal in a policy's rules: the vocabulary random facts draw from, so rules do fire. */
function literals(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === 'string') into.add(value);
  else if (Array.isArray(value)) value.forEach((v) => literals(v, into));
  else if (typeof value === 'object' && value !== null) Object.values(value).forEach((v) => literals(v, into));
  return into;
}

function factsFor(policy: PolicyDocument): fc.Arbitrary<Facts> {
  const words = [...literals(policy.rules.map((r) => r.when)), 'system', 'dpo', 'admin', 'agent', 'legal', 'auditor'];
  const word = fc.oneof(fc.constantFrom(...words), fc.string({ maxLength: 8 }));
  const byType = {
    string: word,
    number: fc.oneof(fc.integer({ min: -1, max: 4 }), fc.double({ noNaN: true, noDefaultInfinity: true })),
    boolean: fc.boolean(),
    'string[]': fc.uniqueArray(word, { maxLength: 4 }),
  } as const;
  const model: Record<string, fc.Arbitrary<Facts[string]>> = {};
  for (const [name, type] of Object.entries(policy.variables)) {
    model[name] = fc.option(byType[type] as fc.Arbitrary<Facts[string]>, { nil: null, freq: 8 });
  }
  return fc.record(model, { requiredKeys: [] }) as fc.Arbitrary<Facts>;
}

function matches(when: unknown, facts: Facts): boolean {
  try {
    return jsonLogic.truthy(jsonLogic.apply(when as jsonLogic.RulesLogic, facts));
  } catch {
    return false;
  }
}

describe.each(policies.map((p) => [p.id, p] as const))('policy %s under random facts', (_id, policy) => {
  it('decides deterministically, with a declared outcome, by the first matching rule or else the default', () => {
    fc.assert(
      fc.property(factsFor(policy), (facts) => {
        expect(validateFacts(policy, facts)).toEqual([]);
        const decision = evaluatePolicy(policy, facts);
        expect(evaluatePolicy(policy, structuredClone(facts))).toEqual(decision);
        expect(policy.outcomes).toContain(decision.outcome);
        expect(decision).toMatchObject({ policyId: policy.id, policyVersion: policy.version });
        const first = policy.rules.find((r) => matches(r.when, facts));
        if (first) {
          expect(decision).toMatchObject({ ruleId: first.id, outcome: first.outcome });
        } else {
          expect(decision).toMatchObject({ ruleId: 'default', outcome: policy.default });
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe('default deny', () => {
  it('returns the default when no rule matches, whatever the rules would allow', () => {
    const token = fc.stringMatching(/^[a-z]{3,8}$/);
    fc.assert(
      fc.property(
        fc.uniqueArray(token, { minLength: 1, maxLength: 5 }),
        fc.array(fc.constantFrom('allow', 'deny'), { minLength: 5, maxLength: 5 }),
        fc.string(),
        (grounds, outcomes, asked) => {
          fc.pre(!grounds.includes(asked));
          const policy = policyWith(
            grounds.map((g, i) => rule(`r${i}`, { '===': [{ var: 'ground' }, g] }, outcomes[i] ?? 'allow')),
          );
          expect(evaluatePolicy(policy, { ground: asked })).toMatchObject({ outcome: 'deny', ruleId: 'default' });
          expect(evaluatePolicy(policy, {})).toMatchObject({ outcome: 'deny', ruleId: 'default' });
        },
      ),
    );
  });

  it('does not let a rule that throws allow anything', () => {
    const policy = policyWith([rule('broken', { startsWith: [{ var: 'ground' }, 'a'] })]);
    expect(evaluatePolicy(policy, { ground: 'a' })).toMatchObject({ outcome: 'deny', ruleId: 'default' });
  });
});

const roleSets = fc.uniqueArray(fc.constantFrom('agent', 'dpo', 'legal', 'reviewer', 'auditor', 'admin', 'system'), {
  maxLength: 3,
});
const GDPR = ['art17-1a', 'art17-1b', 'art17-1c', 'art17-1d', 'art17-1e', 'art17-1f'];
const SELECTORS = ['subjectId', 'memoryIds', 'validTime', 'transactionTime', 'contentFingerprint'];

describe('erasure-authorisation against its specification', () => {
  const policy = policies.find((p) => p.id === 'erasure-authorisation')!;

  it('allows exactly a DPO or admin on an Art. 17 ground or correction, and the sweep on expired ids', () => {
    fc.assert(
      fc.property(
        roleSets,
        fc.constantFrom(...GDPR, 'retention-expiry', 'correction', 'art17-2', 'whim'),
        fc.constantFrom(...SELECTORS, 'everything'),
        (roles, legalGround, selectorKind) => {
          const officer = roles.includes('dpo') || roles.includes('admin');
          const expected =
            (officer && [...GDPR, 'correction'].includes(legalGround) && SELECTORS.includes(selectorKind)) ||
            (roles.includes('system') && legalGround === 'retention-expiry' && selectorKind === 'memoryIds');
          const decision = evaluatePolicy(policy, { requesterRoles: roles, legalGround, selectorKind });
          expect(decision.outcome).toBe(expected ? 'allow' : 'deny');
        },
      ),
    );
  });
});

describe('legal-holds against its specification', () => {
  const policy = policies.find((p) => p.id === 'legal-holds')!;

  it('lets legal place and release, an admin only place, and nobody else', () => {
    fc.assert(
      fc.property(
        roleSets,
        fc.constantFrom('place', 'release', 'extend'),
        fc.constantFrom('subject', 'records', 'namespace', 'tenant'),
        (roles, action, scopeKind) => {
          const knownScope = ['subject', 'records', 'namespace'].includes(scopeKind);
          const expected =
            knownScope &&
            ((roles.includes('legal') && ['place', 'release'].includes(action)) ||
              (roles.includes('admin') && action === 'place'));
          const decision = evaluatePolicy(policy, { actorRoles: roles, action, scopeKind });
          expect(decision.outcome).toBe(expected ? 'allow' : 'deny');
        },
      ),
    );
  });
});

describe('validateFacts', () => {
  it('names facts the policy does not declare and values of the wrong type', () => {
    const policy = policyWith([]);
    expect(validateFacts(policy, { roles: ['dpo'], ground: 'a', tier: 2, flag: false, other: null })).toEqual([
      'other: not a variable of policy "sample"',
    ]);
    expect(validateFacts(policy, { roles: 'dpo', tier: '2', flag: 1, ground: ['a'] })).toEqual([
      'roles: expected string[], got string',
      'tier: expected number, got string',
      'flag: expected boolean, got number',
      'ground: expected string, got array',
    ]);
    expect(validateFacts(policy, { roles: null, tier: undefined })).toEqual([]);
  });
});
