import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { disclosedRefusal } from '../../../src/ingestion/refusal-disclosure.js';
import { noSuchRecord, type Refusal } from '../../../src/ingestion/refusal.js';

const tombstonedEvent: Refusal = {
  type: 'Tombstoned',
  field: 'events.2',
  tellsOfErasure: 'record',
  message: 'events.2: this event was erased and may not be ingested again',
};
const fenced: Refusal = {
  type: 'Conflict',
  field: 'events.0.subjects.1',
  tellsOfErasure: 'record',
  message:
    'events.0.subjects.1: erasure request erq_x is in progress for this subject; nothing about it may be written until it completes',
};
const erasedCitation: Refusal = {
  type: 'Tombstoned',
  field: 'memories.1.provenance.parentIds.0',
  tellsOfErasure: 'cited-record',
  message: 'memories.1.provenance.parentIds.0: the cited record was erased; nothing may be derived from it',
};

describe('a refusal as the caller sees it', () => {
  it('is shown as it is to a caller with erasure rights', () => {
    for (const r of [tombstonedEvent, fenced, erasedCitation]) expect(disclosedRefusal(r, true)).toBe(r);
  });

  it('reads, to anyone else, as the citation of a record that never existed', () => {
    expect(disclosedRefusal(erasedCitation, false)).toEqual(noSuchRecord('memories.1.provenance.parentIds.0'));
  });

  it('names only the item, never the subject or the erasure, for a tombstone or a fence', () => {
    const a = disclosedRefusal(tombstonedEvent, false);
    const b = disclosedRefusal(fenced, false);
    expect(a).toEqual({
      type: 'Conflict',
      field: 'events.2',
      message: expect.stringMatching(/^events\.2: not admitted now/),
    });
    expect(b.field).toBe('events.0');
    // A tombstone and a running erasure cannot be told apart.
    expect(b.message.replace('events.0', 'events.2')).toBe(a.message);
  });

  it('leaves refusals that tell of no erasure as they are', () => {
    const policy: Refusal = {
      type: 'PolicyDenied',
      field: 'memories.0',
      message: 'memories.0: the write policy does not allow this write',
    };
    expect(disclosedRefusal(policy, false)).toBe(policy);
  });

  it('never carries the words of an erasure to a caller without rights, whatever the field', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Refusal['type']>('Tombstoned', 'Conflict'),
        fc.constantFrom<'record' | 'cited-record'>('record', 'cited-record'),
        fc.string(),
        (type, tells, field) => {
          const seen = disclosedRefusal(
            { type, field, tellsOfErasure: tells, message: `${field}: erased for a subject` },
            false,
          );
          expect(seen.tellsOfErasure).toBeUndefined();
          expect(seen.message.replace(seen.field, '')).not.toMatch(/eras|tombston|subject|fence/i);
        },
      ),
    );
  });
});
