import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ADJUDICATIONS,
  adjudicationTargets,
  claimGroups,
  contradicts,
  supersededValidTo,
  validTimesOverlap,
  type ClaimView,
} from '../../../src/governance/disputes/contradiction.js';
import { canTransition, MEMORY_STATUSES } from '../../../src/shared/lifecycle.js';

const DAY = 86_400_000;
const interval = fc
  .tuple(fc.integer({ min: 0, max: 1000 }), fc.option(fc.integer({ min: 1, max: 400 }), { nil: null }))
  .map(([start, length]) => ({
    validFrom: new Date(start * DAY),
    validTo: length === null ? null : new Date((start + length) * DAY),
  }));

const claim = fc
  .record({
    id: fc.constantFrom('m1', 'm2', 'm3'),
    status: fc.constantFrom(...MEMORY_STATUSES),
    kind: fc.constantFrom('fact', 'preference'),
    subjects: fc.subarray(['s1', 's2', 's3'], { minLength: 1 }),
    attribute: fc.option(fc.constantFrom('employer', 'city'), { nil: null }),
    contentHash: fc.constantFrom('h1', 'h2'),
    interval,
  })
  .map(({ interval: i, ...rest }): ClaimView => ({ ...rest, ...i }));

describe('contradictions', () => {
  it('valid-time overlap is symmetric, and a claim overlaps itself', () => {
    fc.assert(
      fc.property(interval, interval, (a, b) => {
        expect(validTimesOverlap(a, b)).toBe(validTimesOverlap(b, a));
        expect(validTimesOverlap(a, a)).toBe(true);
      }),
    );
  });

  it('two held claims contradict each other both ways, and never with themselves or with equal content', () => {
    fc.assert(
      fc.property(claim, claim, (a, b) => {
        const held = (c: ClaimView) => c.status === 'active' || c.status === 'disputed';
        if (held(a) && held(b)) expect(contradicts(a, b)).toBe(contradicts(b, a));
        expect(contradicts(a, a)).toBe(false);
        if (a.contentHash === b.contentHash || a.attribute === null) expect(contradicts(a, b)).toBe(false);
        if (contradicts(a, b)) expect(validTimesOverlap(a, b)).toBe(true);
      }),
    );
  });

  it('every adjudication moves each disputed record along a legal transition, and keeps at least one', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ADJUDICATIONS), fc.constantFrom('m1', 'm2'), (outcome, chosen) => {
        const targets = adjudicationTargets(['m1', 'm2'], outcome, outcome === 'keep-both' ? null : chosen);
        for (const to of targets.values()) expect(canTransition('disputed', to)).toBe(true);
        expect([...targets.values()]).toContain('active');
      }),
    );
  });

  it('closes a superseded claim no earlier than it began', () => {
    fc.assert(
      fc.property(interval, interval, fc.integer({ min: 0, max: 2000 }), (loser, winner, nowDay) => {
        const now = new Date(nowDay * DAY + DAY);
        const end = supersededValidTo(loser, winner, now);
        if (loser.validTo) expect(end.getTime()).toBeLessThanOrEqual(loser.validTo.getTime());
        if (winner.validFrom > loser.validFrom) expect(end.getTime()).toBeGreaterThan(loser.validFrom.getTime());
      }),
    );
  });
});

describe('groups of claims that can meet', () => {
  const record = fc.record({
    attribute: fc.option(fc.constantFrom('employer', 'city'), { nil: null }),
    subjects: fc.subarray(['s1', 's2', 's3', 's4'], { minLength: 1 }),
  });

  it('puts every pair sharing an attribute and a subject in one group, keeps order, and loses nothing', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 12 }), (raw) => {
        const records = raw.map((r, i) => ({ ...r, i }));
        const groups = claimGroups(records);
        expect(
          groups
            .flat()
            .map((r) => r.i)
            .sort((a, b) => a - b),
        ).toEqual(records.map((r) => r.i));
        const groupOf = new Map(groups.flatMap((g, n) => g.map((r) => [r.i, n] as const)));
        for (const g of groups) expect(g.map((r) => r.i)).toEqual([...g.map((r) => r.i)].sort((a, b) => a - b));
        for (const a of records) {
          for (const b of records) {
            const meet =
              a.attribute !== null && a.attribute === b.attribute && a.subjects.some((s) => b.subjects.includes(s));
            if (meet) expect(groupOf.get(a.i)).toBe(groupOf.get(b.i));
          }
        }
      }),
    );
  });
});
