import { describe, expect, it } from 'vitest';
import { droppedQualifiers } from '../../../src/governance/derivation/qualifier-drift.js';
import { derivationDisclosure } from '../../../src/governance/derivation/disclosure.js';
import type { DerivationAuditRecord } from '../../../src/substrate/model/records.js';

function audit(label: string, mode: 'enforce' | 'record' = 'enforce'): DerivationAuditRecord {
  return {
    verifier: { id: 'lethe-deterministic', version: '1' },
    label,
    citationOnly: 'unsupported',
    expanded: label === 'repaired' ? 'supported' : label,
    obligations: [
      { id: 'o1', kind: 'claim', label: 'supported', evidenceIds: ['evt_a'] },
      {
        id: 'o2',
        kind: 'relation',
        relation: 'cause',
        label: label === 'repaired' ? 'supported' : 'unresolved',
        evidenceIds: [],
      },
    ],
    repairedEvidenceIds: label === 'repaired' ? ['evt_b'] : [],
    evidenceIds: ['evt_a', 'evt_b'],
    counts: { cited: 1, retrieved: 1, leftOut: 0, obligations: 2 },
    mode,
    policy: { id: 'derivation-admission', version: 1, rule: 'x', outcome: 'admit' },
  };
}

describe('later use of an audited memory', () => {
  it('finds the qualifier kinds a superseding write drops, and none when it carries them forward', () => {
    expect(droppedQualifiers('The user might move to Berlin in March.', 'The user moved to Berlin.')).toEqual([
      'time',
      'uncertainty',
    ]);
    expect(droppedQualifiers('The user has three kids.', 'The user has four kids.')).toEqual([]);
    expect(droppedQualifiers('The user does not eat meat.', 'The user eats meat.')).toEqual(['negation']);
  });

  it('discloses a repaired or signed-off record by flag and counts, and says nothing of a plainly supported one', () => {
    expect(derivationDisclosure(audit('supported'))).toBeNull();
    expect(derivationDisclosure(undefined)).toBeNull();
    expect(derivationDisclosure(audit('repaired'))).toEqual({
      label: 'repaired',
      admittedBy: 'repair',
      obligations: 2,
      notSupported: 0,
      repairedEvidence: 1,
    });
    expect(derivationDisclosure(audit('unresolved'))).toEqual({
      label: 'unresolved',
      admittedBy: 'sign-off',
      obligations: 2,
      notSupported: 1,
      repairedEvidence: 0,
    });
    expect(derivationDisclosure(audit('unsupported', 'record'))).toMatchObject({ admittedBy: 'record-mode' });
    expect(derivationDisclosure(audit('supported'), { dropped: ['time'] })).toMatchObject({
      admittedBy: 'audit',
      qualifiersDropped: ['time'],
    });
    // Ids and counts only: no evidence id, no wording.
    expect(JSON.stringify(derivationDisclosure(audit('repaired')))).not.toMatch(/evt_/);
  });
});
