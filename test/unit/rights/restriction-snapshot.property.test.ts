/**
 * The read judge's view of restrictions and objections, against a model: which context reads are barred, what a
 * duty read is told, and that a restriction filed under an earlier fingerprint key still matches.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFingerprinter } from '../../../src/substrate/fingerprint.js';
import { restrictionSnapshot } from '../../../src/governance/rights/restriction.js';
import { resolveReader } from '../../../src/governance/read/reader.js';
import { seeEvent, seeMemory, verdictOf } from '../../../src/governance/read/read-judge.js';
import { loadPolicies, requirePolicy } from '../../../src/governance/policy/policy-set.js';
import { judgedEvent, memoryRecord } from '../../support/samples.js';

const SUBJECTS = ['ana', 'ben', 'cy', 'dee'];
const PURPOSES = ['support', 'personalisation', 'marketing'];
const keys = createFingerprinter([
  { id: 'k2', secret: 'current-secret-current-secret-32b' },
  { id: 'k1', secret: 'earlier-secret-earlier-secret-32b' },
]);
const hashUnder = (secret: string, subject: string) =>
  createFingerprinter(secret).of('restriction-subject', 'acme', subject);
const hashesOf = (subject: string) => keys.all('restriction-subject', 'acme', subject);

const filing = fc.record({
  subject: fc.constantFrom(...SUBJECTS),
  purposes: fc.option(fc.uniqueArray(fc.constantFrom(...PURPOSES), { minLength: 1 }), { nil: null }),
  earlierKey: fc.boolean(),
});

describe('restrictions as the read judge sees them', () => {
  it('bars a context read exactly when a subject of the record is restricted or objected to for its purpose', () => {
    fc.assert(
      fc.property(
        fc.array(filing, { maxLength: 6 }),
        fc.uniqueArray(fc.constantFrom(...SUBJECTS), { minLength: 1 }),
        fc.constantFrom(...PURPOSES),
        (filed, subjects, purpose) => {
          const snapshot = restrictionSnapshot(
            filed.map((f) => ({
              subjectHash: hashUnder(
                f.earlierKey ? 'earlier-secret-earlier-secret-32b' : 'current-secret-current-secret-32b',
                f.subject,
              ),
              purposes: f.purposes,
            })),
            hashesOf,
          );
          const about = filed.filter((f) => subjects.includes(f.subject));
          const model = about.some((f) => f.purposes === null || f.purposes.includes(purpose));
          expect(snapshot.bars(subjects, purpose)).toBe(model);
          const mark = snapshot.markOf(subjects);
          if (about.length === 0) expect(mark).toBeNull();
          else
            expect(mark).toEqual({
              restricted: about.some((f) => f.purposes === null),
              objectedPurposes: [...new Set(about.flatMap((f) => f.purposes ?? []))].sort(),
            });
        },
      ),
    );
  });

  const policies = loadPolicies();
  const read = { read: requirePolicy(policies, 'memory-read'), scope: requirePolicy(policies, 'memory-scope') };
  const restrictedAna = restrictionSnapshot([{ subjectHash: hashesOf('ana')[0]!, purposes: null }], hashesOf);
  const memory = memoryRecord('acme', 'mem_1', 'Ana prefers e-mail.', { scope: 'tenant', subjects: ['ana', 'ben'] });
  const event = judgedEvent('acme', 'evt_1', { subjects: ['ana'] });

  it("refuses an agent's read on the policy axis and lets a duty read see the record, marked", () => {
    const agent = resolveReader(read, { id: 'ann', tenant: 'acme', roles: ['agent'] }, { restrictions: restrictedAna });
    expect(seeMemory(agent, memory)).toBeNull();
    expect(seeEvent(agent, event)).toBeNull();
    expect(verdictOf(agent, agent.grants[0]!, memory).axes).toEqual({ scope: 1, policy: 0, lifecycle: 1 });
    const unrestricted = resolveReader(read, { id: 'ann', tenant: 'acme', roles: ['agent'] });
    expect(seeMemory(unrestricted, memory)).not.toBeNull();

    const dpo = resolveReader(read, { id: 'dora', tenant: 'acme', roles: ['dpo'] }, { restrictions: restrictedAna });
    expect(seeMemory(dpo, memory)?.restriction).toEqual({ restricted: true, objectedPurposes: [] });
    expect(seeEvent(dpo, event)?.restriction).toEqual({ restricted: true, objectedPurposes: [] });
  });

  it('counts a record whose subjects cannot be read as unresolved while the tenant restricts anyone', () => {
    const agent = resolveReader(read, { id: 'ann', tenant: 'acme', roles: ['agent'] }, { restrictions: restrictedAna });
    const unreadable = { ...memory, subjects: undefined } as unknown as typeof memory;
    expect(verdictOf(agent, agent.grants[0]!, unreadable).admissible).toBe('unknown');
  });
});
