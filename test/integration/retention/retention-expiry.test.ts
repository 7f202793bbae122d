import { describe, expect, it } from 'vitest';
import { loadPolicies, requirePolicy } from '../../../src/governance/policy/policy-set.js';
import type { PolicyDocument } from '../../../src/governance/policy/evaluate.js';
import {
  retentionDecision,
  retentionExpiry,
  retentionFields,
  shortestPeriod,
} from '../../../src/governance/retention/retention-expiry.js';
import {
  addBuckets,
  bucketStart,
  expiryBucketOf,
  isExpiryBucket,
} from '../../../src/governance/retention/expiry-bucket.js';

const policy = requirePolicy(loadPolicies(), 'retention');
const at = new Date('2026-01-31T10:15:00Z');
const facts = (
  overrides: Partial<{ kind: string; namespace: string; sensitivity: string; jurisdiction: string }> = {},
) => ({
  kind: 'fact',
  namespace: 'support',
  sensitivity: 'internal',
  jurisdiction: 'PT',
  ...overrides,
});

describe('retention expiry at admission (pure)', () => {
  it('adds the policy period to the transaction time, by the calendar in UTC', () => {
    expect(retentionExpiry(policy, facts(), at).toISOString()).toBe('2027-01-31T10:15:00.000Z');
    expect(retentionExpiry(policy, facts({ kind: 'summary' }), at).toISOString()).toBe('2026-05-01T10:15:00.000Z');
    expect(retentionExpiry(policy, facts({ namespace: 'finance/ap', jurisdiction: 'DE' }), at).toISOString()).toBe(
      '2036-01-31T10:15:00.000Z',
    );
    expect(retentionExpiry(policy, facts({ namespace: 'contracts', jurisdiction: 'GB' }), at).toISOString()).toBe(
      '2032-01-31T10:15:00.000Z',
    );
    expect(retentionExpiry(policy, facts({ namespace: 'hr/leave' }), at).toISOString()).toBe(
      '2029-01-31T10:15:00.000Z',
    );
  });

  it('keeps special-category data for the shortest period, even in commercial namespaces', () => {
    const decision = retentionDecision(
      policy,
      facts({ sensitivity: 'special', namespace: 'finance', jurisdiction: 'DE' }),
      at,
    );
    expect(decision).toMatchObject({
      ruleId: 'special-category-data',
      period: 'P30D',
      policyId: 'retention',
      policyVersion: 1,
    });
    expect(decision.expiresAt.toISOString()).toBe('2026-03-02T10:15:00.000Z');
  });

  it('gives an unclassified kind the default, which is the shortest period', () => {
    expect(shortestPeriod(policy)).toBe('P30D');
    expect(retentionDecision(policy, facts({ kind: 'unknown-kind' }), at)).toMatchObject({
      ruleId: 'default',
      period: 'P30D',
    });
  });

  it('falls back to the shortest period when a rule decides something that is not a duration', () => {
    const broken: PolicyDocument = {
      ...policy,
      rules: [{ id: 'typo', outcome: 'one year', when: { '===': [1, 1] } }],
    };
    expect(retentionDecision(broken, facts(), at)).toMatchObject({ ruleId: 'typo', period: 'P30D' });
  });

  it('files the record under the UTC hour of its expiry', () => {
    const fields = retentionFields(policy, facts(), at);
    expect(fields).toEqual({ expiresAt: new Date('2027-01-31T10:15:00Z'), expiryBucket: '2027-01-31T10' });
    expect(isExpiryBucket(fields.expiryBucket)).toBe(true);
    expect(isExpiryBucket('2027-13-31T10')).toBe(false);
    expect(bucketStart('2027-01-31T10').toISOString()).toBe('2027-01-31T10:00:00.000Z');
    expect(addBuckets('2026-12-31T23', 1)).toBe('2027-01-01T00');
    expect(addBuckets('2027-01-01T00', -24)).toBe('2026-12-31T00');
    expect(expiryBucketOf(new Date('2027-01-31T10:59:59.999Z'))).toBe('2027-01-31T10');
  });
});
