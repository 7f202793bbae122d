/**
 * The purposes a reader may read for come from its token, not from the request, and an objection to any purpose
 * its token grants binds every context read it makes, whichever purpose that read declares.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { restrictionSnapshot } from '../../../src/governance/rights/restriction.js';
import { grantedPurposes, mayReadFor, resolveReader } from '../../../src/governance/read/reader.js';
import { seeEvent, seeMemory } from '../../../src/governance/read/read-judge.js';
import { loadPolicies, requirePolicy } from '../../../src/governance/policy/policy-set.js';
import type { PolicyDocument } from '../../../src/governance/policy/evaluate.js';
import { mintToken, verifyToken } from '../../../src/governance/auth/tokens.js';
import type { Principal, Role } from '../../../src/governance/auth/principal.js';
import { judgedEvent, memoryRecord } from '../../support/samples.js';

const policies = loadPolicies();
const read = { read: requirePolicy(policies, 'memory-read'), scope: requirePolicy(policies, 'memory-scope') };
const agent = (purposes?: string[], roles: Role[] = ['agent']): Principal => ({
  id: 'ann',
  tenant: 'acme',
  roles,
  ...(purposes ? { purposes } : {}),
});
/** Subjects are their own hash here: the snapshot's key handling is tested with the restriction store. */
const objections = (...filed: { subject: string; purposes: string[] | null }[]) =>
  restrictionSnapshot(
    filed.map((f) => ({ subjectHash: f.subject, purposes: f.purposes })),
    (s) => [s],
  );
const memory = memoryRecord('acme', 'mem_1', 'Ana prefers e-mail.', { scope: 'tenant', subjects: ['ana'] });
const event = judgedEvent('acme', 'evt_1', { subjects: ['ana'] });

describe('the purposes a reader may declare', () => {
  it('are the ones its token grants, besides the duties of its roles', () => {
    const granted = agent(['support', 'marketing']);
    expect(resolveReader(read, granted, { purpose: 'support' }).grants.map((g) => g.purpose)).toEqual(['support']);
    const other = resolveReader(read, granted, { purpose: 'personalisation' });
    expect(other.grants).toEqual([]);
    expect(other.ungranted).toEqual(['personalisation']);
    expect(other.purpose).toBe('personalisation');
    // A duty is its roles' to read for whatever the token names; the read policy still decides it by role.
    const reviewer = resolveReader(read, { id: 'rita', tenant: 'acme', roles: ['reviewer'], purposes: [] }, {});
    expect(reviewer.grants.map((g) => [g.purpose, g.duty])).toEqual([['review', true]]);
    expect(resolveReader(read, agent([]), { purpose: 'review' })).toMatchObject({ grants: [] });
    expect(resolveReader(read, agent([]), { purpose: 'review' }).ungranted).toBeUndefined();
  });

  it('default, when the request names none, to the duties of its roles that the token grants', () => {
    expect(resolveReader(read, agent(['support'])).grants.map((g) => g.purpose)).toEqual(['support']);
    expect(resolveReader(read, agent(['personalisation'])).ungranted).toEqual(['support']);
    const both = resolveReader(read, agent(['personalisation'], ['agent', 'reviewer']));
    expect(both.grants.map((g) => g.purpose)).toEqual(['review']);
    expect(both.ungranted).toBeUndefined();
  });

  it('are never widened to the content-free view of a role gate once the token refuses them', () => {
    const refused = resolveReader(read, agent(['support'], ['agent', 'admin']), {
      purpose: 'operations',
      contentFreeForGate: true,
    });
    expect(refused.grants).toEqual([]);
    expect(refused.ungranted).toEqual(['operations']);
  });

  it('of a token issued without the claim, are every purpose the read policy allows its roles and their duties', () => {
    expect(grantedPurposes(read.read, ['agent'])).toEqual(['customer-support', 'personalisation', 'support']);
    expect(grantedPurposes(read.read, ['dpo'])).toEqual(['access-request', 'erasure']);
    expect(grantedPurposes(read.read, ['auditor'])).toEqual(['audit']);
    expect(grantedPurposes(read.read, ['admin', 'agent'])).toEqual([
      'customer-support',
      'operations',
      'personalisation',
      'support',
    ]);
    const legacy = resolveReader(read, agent(), { purpose: 'personalisation' });
    expect(legacy.grants.map((g) => g.purpose)).toEqual(['personalisation']);
    expect(legacy.grantedPurposes).toEqual(['customer-support', 'personalisation', 'support']);
  });

  it('of a token issued without the claim, are any purpose when the read policy allows one it does not name', () => {
    const open: PolicyDocument = {
      ...read.read,
      id: 'memory-read-open',
      rules: [
        {
          id: 'agents-read-internal-for-anything',
          outcome: 'allow',
          when: {
            and: [
              { some: [{ var: 'roles' }, { '===': [{ var: '' }, 'agent'] }] },
              { '===': [{ var: 'sensitivity' }, 'internal'] },
            ],
          },
        },
      ],
    } as PolicyDocument;
    expect(grantedPurposes(open, ['agent'])).toBe('any');
    expect(grantedPurposes(open, ['dpo'])).toEqual(['erasure']);
    expect(mayReadFor('any', 'anything')).toBe(true);
  });
});

describe('an objection to a purpose the token grants', () => {
  const objectedToMarketing = objections({ subject: 'ana', purposes: ['marketing'] });

  it('bars every context read of the subject, whatever purpose it declares', () => {
    const both = resolveReader(read, agent(['support', 'marketing']), {
      purpose: 'support',
      restrictions: objectedToMarketing,
    });
    expect(both.grants.map((g) => g.purpose)).toEqual(['support']);
    expect(seeMemory(both, memory)).toBeNull();
    expect(seeEvent(both, event)).toBeNull();
    // The same reader is served another subject's records.
    expect(seeMemory(both, { ...memory, subjects: ['ben'] })).not.toBeNull();
  });

  it('leaves a reader whose token does not grant the purpose reading', () => {
    const supportOnly = resolveReader(read, agent(['support']), { restrictions: objectedToMarketing });
    expect(seeMemory(supportOnly, memory)).not.toBeNull();
    expect(seeEvent(supportOnly, event)).not.toBeNull();
  });

  it('binds a token issued without the claim for every purpose its roles may read for', () => {
    const legacy = resolveReader(read, agent(), {
      purpose: 'support',
      restrictions: objections({ subject: 'ana', purposes: ['personalisation'] }),
    });
    expect(seeMemory(legacy, memory)).toBeNull();
    expect(seeMemory(resolveReader(read, agent(), { restrictions: objectedToMarketing }), memory)).not.toBeNull();
  });

  it('lets a duty read see the record, marked, as before', () => {
    const dpo = resolveReader(
      read,
      { id: 'dora', tenant: 'acme', roles: ['dpo'], purposes: ['marketing'] },
      {
        restrictions: objectedToMarketing,
      },
    );
    expect(seeMemory(dpo, memory)?.restriction).toEqual({ restricted: false, objectedPurposes: ['marketing'] });
  });

  it('is one rule for any grant: a context read sees the subject exactly when no purpose it may name is objected to', () => {
    const CONTEXT = ['support', 'customer-support', 'personalisation', 'marketing', 'analytics'];
    const READABLE = ['support', 'customer-support', 'personalisation'];
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...CONTEXT), { minLength: 1 }),
        fc.uniqueArray(fc.constantFrom(...CONTEXT), { minLength: 1 }),
        fc.constantFrom(...READABLE),
        (granted, objected, declared) => {
          const principal = agent([...new Set([...granted, declared])]);
          const reader = resolveReader(read, principal, {
            purpose: declared,
            restrictions: objections({ subject: 'ana', purposes: objected }),
          });
          const bound = principal.purposes!.some((p) => objected.includes(p));
          expect(seeMemory(reader, memory) === null).toBe(bound);
          expect(seeEvent(reader, event) === null).toBe(bound);
        },
      ),
    );
  });
});

describe('a token', () => {
  const secret = 'a-development-secret-of-32-bytes!';
  const keys = { hs256Secret: secret };
  const limits = { maxTtlSeconds: 3600 };

  it('carries the purposes it was issued with, and a token issued without them carries none', async () => {
    const withPurposes = await verifyToken(keys, await mintToken(secret, agent(['support', 'marketing'])), limits);
    expect(withPurposes).toEqual(agent(['support', 'marketing']));
    const without = await verifyToken(keys, await mintToken(secret, agent()), limits);
    expect(without).toEqual(agent());
    expect(without).not.toHaveProperty('purposes');
  });

  it('is not issued with purposes that are not distinct purpose names', async () => {
    for (const purposes of [['Support'], ['support', 'support'], [''], ['a b']]) {
      await expect(mintToken(secret, agent(purposes))).rejects.toMatchObject({
        type: 'ValidationError',
        field: 'purposes',
      });
    }
  });
});
