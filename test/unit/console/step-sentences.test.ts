import { describe, expect, it } from 'vitest';
import { count, stepSentence } from '../../../console/src/dpo/step-sentences.js';

describe("an erasure step's sentence, built from its counts", () => {
  it('counts in the singular, the plural, and none', () => {
    expect(count(0, 'record')).toBe('no records');
    expect(count(1, 'record')).toBe('1 record');
    expect(count(2, 'record')).toBe('2 records');
    expect(count(1, 'memory', 'memories')).toBe('1 memory');
    expect(count(4, 'memory', 'memories')).toBe('4 memories');
  });

  it('says what locate found, by kind', () => {
    expect(stepSentence('locate', { located: 9, events: 5, memories: 4, fenced: 1 })).toBe(
      'Found 9 records: 5 events and 4 memories.',
    );
    expect(stepSentence('locate', { located: 1, events: 0, memories: 1 })).toBe(
      'Found 1 record: no events and 1 memory.',
    );
    expect(stepSentence('locate', { located: 0, events: 0, memories: 0 })).toBe('Found no records the request names.');
  });

  it('says what lineage added, and whether any of it is about other people', () => {
    const internals = { rounds: 2, settleRounds: 1, thisRound: 12, thisRoundLocated: 9 };
    expect(stepSentence('closure', { total: 12, located: 9, derived: 3, collateral: 1, ...internals })).toBe(
      'Followed lineage to 3 records derived from them (1 also about other people): the request reaches 12 records.',
    );
    expect(stepSentence('closure', { total: 10, located: 9, derived: 1, collateral: 0 })).toBe(
      'Followed lineage to 1 record derived from them (none about other people): the request reaches 10 records.',
    );
    expect(stepSentence('closure', { total: 1, located: 1, derived: 0, collateral: 0 })).toBe(
      'Nothing was derived from them: the request reaches 1 record.',
    );
  });

  it('says whether the policy allowed it, and what holds keep, naming the holds', () => {
    expect(stepSentence('authorise', { allowed: 1, toErase: 11, held: 1 }, ['hold_12'])).toBe(
      'Allowed by the erasure policy: 11 records to erase; 1 record kept under legal hold (hold hold_12) until released.',
    );
    expect(stepSentence('authorise', { allowed: 1, toErase: 1, held: 3 }, ['hold_1', 'hold_2'])).toBe(
      'Allowed by the erasure policy: 1 record to erase; 3 records kept under legal hold (holds hold_1 and hold_2) until released.',
    );
    expect(stepSentence('authorise', { allowed: 1, toErase: 4, held: 0 })).toBe(
      'Allowed by the erasure policy: 4 records to erase, none under a legal hold.',
    );
    expect(stepSentence('authorise', { allowed: 0, toErase: 0, held: 0 })).toBe(
      'The erasure policy does not allow this request: nothing is erased.',
    );
  });

  it('says what the marking stopped serving, and the tombstones left', () => {
    expect(stepSentence('tombstone', { marked: 11, tombstones: 25, records: 11, indexDocs: 4 })).toBe(
      'Stopped serving 11 records and left 25 tombstones so they cannot be written again.',
    );
    expect(stepSentence('tombstone', { marked: 1, tombstones: 1, records: 1 })).toBe(
      'Stopped serving 1 record and left 1 tombstone so they cannot be written again.',
    );
    expect(stepSentence('tombstone', { records: 0 })).toBe('Nothing to mark: no record was left to erase.');
  });

  it('says what the purge deleted, with keys, lineage and related records only when there were any', () => {
    expect(
      stepSentence('purge', {
        memories: 4,
        events: 5,
        lineage: 3,
        keys: 9,
        indexDocs: 0,
        'side:staged_writes': 1,
        'side:exposures': 1,
        records: 9,
        indexOrphans: 0,
        resumedAt: 0,
      }),
    ).toBe(
      'Deleted 5 events and 4 memories for good, destroyed 9 content keys, removed 3 lineage links and erased 2 related records (sign-offs, read traces, staged writes and the like).',
    );
    expect(stepSentence('purge', { memories: 1, events: 0, lineage: 0, keys: 1, 'side:staged_writes': 0 })).toBe(
      'Deleted no events and 1 memory for good, destroyed 1 content key.',
    );
    expect(stepSentence('purge', {})).toBe('Deleted no events and no memories for good.');
  });

  it('says whether deleted entries are left in the search index', () => {
    expect(stepSentence('expunge', { deletedDocs: 0, segments: 3 })).toBe(
      'Rewrote the search index: no deleted entry is left on disk.',
    );
    expect(stepSentence('expunge', { deletedDocs: 1 })).toBe(
      'Rewriting the search index: 1 deleted entry still on disk.',
    );
    expect(stepSentence('expunge', { deletedDocs: 7 })).toBe(
      'Rewriting the search index: 7 deleted entries still on disk.',
    );
  });

  it('says what the verification found, naming copies that wait for the DPO', () => {
    expect(stepSentence('verify', { found: 0, relocated: 0, deletedDocs: 0, probes: 12, findings: 0 })).toBe(
      'Checked with 12 probes: nothing of the erased records was found anywhere.',
    );
    expect(stepSentence('verify', { found: 1, relocated: 0, probes: 1, findings: 2 })).toBe(
      'Checked with 1 probe: found 1 trace of the erased records and 2 copies under other ids, waiting for your decision.',
    );
    expect(stepSentence('verify', { found: 0, relocated: 1, probes: 12, findings: 1 })).toBe(
      'Checked with 12 probes: found 1 record written about the subject since and 1 copy under other ids, waiting for your decision.',
    );
  });

  it('has no sentence for a step it does not know', () => {
    expect(stepSentence('certify', { certificates: 1 })).toBeNull();
  });
});
