import { describe, expect, it } from 'vitest';
import {
  findRectificationSiblings,
  MAX_RECTIFICATION_SIBLINGS,
  siblingsAmong,
  statesSameValue,
} from '../../../src/governance/rights/rectification-siblings.js';
import { claimOf } from '../../../src/substrate/memories/claim-lookup.js';
import { sha256Hex } from '../../../src/shared/sha256.js';
import type { MemoryRecord } from '../../../src/substrate/model/records.js';
import { memoryRecord } from '../../support/samples.js';

const now = new Date('2026-12-04T00:00:00.000Z');
const wrong = 'Ana wants invoices by e-mail.';
const record = (id: string, overrides: Partial<MemoryRecord> = {}) => {
  const content = overrides.content ?? wrong;
  return memoryRecord('acme', id, content, {
    subjects: ['ana'],
    attribute: 'invoice-channel',
    contentHash: sha256Hex(content),
    scope: `principal:agent-${id}`,
    ...overrides,
  });
};
const named = record('mem_named');

describe('the copies a rectification reaches', () => {
  it('are the records of the same subjects and attribute that state the same value, in any scope', () => {
    expect(statesSameValue(named, record('mem_a'))).toBe(true);
    // Case, spacing and a final full stop do not make another value.
    expect(statesSameValue(named, record('mem_b', { content: 'ana wants  invoices by e-mail' }))).toBe(true);
    expect(statesSameValue(named, record('mem_c', { content: 'Ana wants invoices by post.' }))).toBe(false);
    expect(statesSameValue(named, record('mem_d', { attribute: 'invoice-note' }))).toBe(false);
    expect(statesSameValue(named, record('mem_e', { subjects: ['ana', 'ben'] }))).toBe(false);
    expect(statesSameValue(named, record('mem_f', { tenant: 'other' }))).toBe(false);
    expect(statesSameValue(named, named)).toBe(false);
    // A record about no attribute has no copies: nothing says two of its statements are about the same thing.
    expect(statesSameValue({ ...named, attribute: null }, { ...record('mem_g'), attribute: null })).toBe(false);
  });

  it('leave out what the processing judge does not let a correction touch, and count it by rule', () => {
    const { siblings, refused } = siblingsAmong(
      named,
      [
        record('mem_z'),
        record('mem_held', { restrictedBy: ['hold_1'] }),
        record('mem_old', { status: 'superseded' }),
        record('mem_gone', { status: 'deleted' }),
        record('mem_disputed', { status: 'disputed' }),
        record('mem_other', { content: 'Ana wants invoices by post.' }),
      ],
      now,
    );
    expect(siblings.map((s) => s._id)).toEqual(['mem_disputed', 'mem_z']);
    expect(refused).toEqual({ held: 1, lifecycle: 1, erased: 1 });
  });

  it(`are at most ${MAX_RECTIFICATION_SIBLINGS}: past that, a filing is told how many there are`, async () => {
    const many = Array.from({ length: MAX_RECTIFICATION_SIBLINGS + 5 }, (_, i) => record(`mem_${i}`));
    const read: string[][] = [];
    const deps = {
      claims: { bySubjectAttribute: async () => [named, ...many].map(claimOf) },
      memories: {
        getMany: async (_tenant: string, ids: readonly string[]) => {
          read.push([...ids]);
          return many.filter((m) => ids.includes(m._id));
        },
      },
    };
    expect(await findRectificationSiblings(deps, named, now)).toEqual({
      kind: 'too-many',
      count: MAX_RECTIFICATION_SIBLINGS + 5,
    });
    // Counted from the claims, without reading a copy's content.
    expect(read).toEqual([]);
    const few = { ...deps, claims: { bySubjectAttribute: async () => [named, ...many.slice(0, 3)].map(claimOf) } };
    const found = await findRectificationSiblings(few, named, now);
    expect(found.kind === 'found' && found.siblings.map((s) => s._id)).toEqual(['mem_0', 'mem_1', 'mem_2']);
  });
});
