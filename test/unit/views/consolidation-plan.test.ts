import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { MemoryRecord } from '../../../src/substrate/model/records.js';
import {
  independentAgreement,
  MAX_VIEW_INPUTS,
  planViews,
  viewValidity,
} from '../../../src/substrate/views/consolidation-plan.js';
import { consolidationVerdict } from '../../../activities/consolidation.activities.js';
import { restrictionSnapshot } from '../../../src/governance/rights/restriction.js';
import type { ProcessingContext } from '../../../src/governance/read/processing-judge.js';
import { extractiveSummary, MAX_SUMMARY_SENTENCES } from '../../../src/substrate/views/extractive-summariser.js';

const model = { modelVersion: 'extractive@1', promptVersion: null };
let n = 0;
function rec(overrides: Partial<MemoryRecord> = {}): MemoryRecord {
  n++;
  const at = new Date(Date.UTC(2026, 10, 1, 0, n));
  return {
    _id: `mem_${String(n).padStart(4, '0')}`,
    tenant: 't',
    namespace: 'support',
    subjects: ['s1'],
    kind: 'preference',
    attribute: 'contact-channel',
    content: 'Prefers e-mail.',
    contentHash: `h${n}`,
    validFrom: at,
    validTo: null,
    recordedAt: at,
    policy: { purpose: 'customer-support', sensitivity: 'internal', jurisdiction: 'PT', retentionClass: 'standard' },
    provenance: {
      eventIds: [`evt_${n}`],
      parentIds: [],
      derivationRule: 'extract',
      modelVersion: null,
      promptVersion: null,
    },
    trustTier: 1,
    confidence: 0.9,
    version: 1,
    status: 'active',
    writtenBy: 'agent-1',
    scope: 'principal:agent-1',
    expiresAt: null,
    highImpact: false,
    statusReason: 'low',
    updatedAt: at,
    ...overrides,
  };
}

describe('planning views', () => {
  it('makes a view of an attribute stated alike and a summary of a subject’s different statements', () => {
    const a = rec({ content: 'Prefers e-mail.' });
    const b = rec({ content: 'prefers  e-mail' });
    const c = rec({ content: 'Lives in Lisbon.', attribute: 'city' });
    const lone = rec({ subjects: ['s2'] });
    const { groups } = planViews('t', [a, b, c, lone], model);
    expect(groups.map((g) => [g.kind, g.inputs.map((r) => r._id)])).toEqual(
      expect.arrayContaining([
        ['view', [a._id, b._id]],
        ['summary', [a._id, b._id, c._id]],
      ]),
    );
    expect(groups).toHaveLength(2);
  });

  it('gives the same key and id whatever order the inputs are read in, and a new one for a new model or input version', () => {
    const rs = [
      rec(),
      rec({ content: 'Lives in Lisbon.', attribute: 'city' }),
      rec({ content: 'Works nights.', attribute: 'shift' }),
    ];
    fc.assert(
      fc.property(fc.shuffledSubarray(rs, { minLength: 3, maxLength: 3 }), (shuffled) => {
        expect(planViews('t', shuffled, model).groups[0]!.id).toBe(planViews('t', rs, model).groups[0]!.id);
      }),
    );
    const base = planViews('t', rs, model).groups[0]!.key;
    expect(planViews('t', rs, { modelVersion: 'extractive@2', promptVersion: null }).groups[0]!.key).not.toBe(base);
    expect(planViews('t', [{ ...rs[0]!, version: 2 }, rs[1]!, rs[2]!], model).groups[0]!.key).not.toBe(base);
    expect(planViews('t2', rs, model).groups[0]!.key).not.toBe(base);
  });

  it('never gives a view more confidence or trust than its weakest input, unless independent writers agree', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            confidence: fc.double({ min: 0, max: 1, noNaN: true }),
            trustTier: fc.integer({ min: 0, max: 3 }),
            writer: fc.constantFrom('agent-1', 'agent-2', 'agent-3'),
            same: fc.boolean(),
          }),
          { minLength: 2, maxLength: 8 },
        ),
        (inputs) => {
          const records = inputs.map((i, k) =>
            rec({
              confidence: i.confidence,
              trustTier: i.trustTier,
              writtenBy: i.writer,
              content: i.same ? 'Prefers e-mail.' : `Fact ${k}.`,
              attribute: i.same ? 'contact-channel' : `a${k}`,
            }),
          );
          for (const g of planViews('t', records, model).groups) {
            const min = Math.min(...g.inputs.map((r) => r.confidence));
            const max = Math.max(...g.inputs.map((r) => r.confidence));
            expect(g.trustTier).toBe(Math.min(...g.inputs.map((r) => r.trustTier)));
            if (independentAgreement(g.inputs)) expect(g.confidence).toBe(max);
            else expect(g.confidence).toBe(min);
          }
        },
      ),
    );
  });

  it('counts independent agreement only for the same statement from two writers citing different events', () => {
    const one = rec({ writtenBy: 'agent-1', provenance: { ...rec().provenance, eventIds: ['e1'] } });
    const two = rec({ writtenBy: 'agent-2', provenance: { ...rec().provenance, eventIds: ['e2'] } });
    expect(independentAgreement([one, two])).toBe(true);
    // The same writer twice, a shared event, or a different statement: not independent.
    expect(independentAgreement([one, { ...two, writtenBy: 'agent-1' }])).toBe(false);
    expect(independentAgreement([one, { ...two, provenance: { ...two.provenance, eventIds: ['e1'] } }])).toBe(false);
    expect(independentAgreement([one, { ...two, content: 'Prefers phone.' }])).toBe(false);
    expect(independentAgreement([one])).toBe(false);
  });

  it('reads only active, unrestricted, current, uncontested records of the namespace and scope that are not views', () => {
    // s-restricted restricted processing; s-objected objected to one purpose (a view serves every purpose).
    const restrictions = restrictionSnapshot(
      [
        { subjectHash: 'h:s-restricted', purposes: null },
        { subjectHash: 'h:s-objected', purposes: ['marketing'] },
      ],
      (s) => [`h:${s}`],
    );
    const ctx: ProcessingContext = {
      tenant: 't',
      scopes: ['principal:agent-1'],
      purposes: 'any',
      restrictions,
      now: new Date(Date.UTC(2026, 11, 1)),
    };
    const consolidable = (r: MemoryRecord) => consolidationVerdict(r, 'support', ctx)?.allowed === true;
    expect(consolidable(rec())).toBe(true);
    expect(consolidable(rec({ validTo: new Date(Date.UTC(2027, 0, 1)) }))).toBe(true);
    for (const other of [
      rec({ status: 'candidate' }),
      rec({ status: 'disputed' }),
      rec({ namespace: 'hr' }),
      rec({ scope: 'principal:agent-2' }),
      rec({ kind: 'summary' }),
      rec({ kind: 'view' }),
      rec({ restrictedBy: ['hold-1'] }),
      rec({ validTo: new Date(Date.UTC(2026, 10, 20)) }),
      rec({ contestedBy: ['rect_1'] }),
      rec({ stale: { because: 'rectification:rect_1', since: new Date() } }),
      rec({ subjects: ['s-restricted'] }),
      rec({ subjects: ['s-objected'] }),
      rec({ tenant: 'other' }),
    ])
      expect(consolidable(other)).toBe(false);
  });

  it('gives a view only the valid time all its inputs share', () => {
    const d = (day: number) => new Date(Date.UTC(2026, 10, day));
    expect(
      viewValidity([
        { validFrom: d(1), validTo: d(20) },
        { validFrom: d(5), validTo: null },
        { validFrom: d(3), validTo: d(25) },
      ]),
    ).toEqual({ validFrom: d(5), validTo: d(20) });
    expect(viewValidity([{ validFrom: d(1), validTo: null }])).toEqual({ validFrom: d(1), validTo: null });
    expect(
      viewValidity([
        { validFrom: d(1), validTo: d(5) },
        { validFrom: d(6), validTo: null },
      ]),
    ).toBeNull();
    const apart = [rec({ validFrom: d(1), validTo: d(5) }), rec({ validFrom: d(6), validTo: null })];
    expect(planViews('t', apart, model)).toMatchObject({ groups: [], skipped: { 'no-common-valid-time': 1 } });
  });

  it('leaves groups of mixed governance or too many inputs, and counts them', () => {
    const mixed = [rec(), rec({ content: 'Other.', attribute: 'x', policy: { ...rec().policy, jurisdiction: 'DE' } })];
    expect(planViews('t', mixed, model)).toMatchObject({ groups: [], skipped: { 'mixed-governance': 1 } });
    const many = Array.from({ length: MAX_VIEW_INPUTS + 1 }, () => rec({ subjects: ['big'] }));
    expect(planViews('t', many, model).skipped).toEqual({ 'too-many-inputs': 1 });
  });
});

describe('the extractive summary', () => {
  it('says each distinct content once, oldest first, and nothing no input said', () => {
    const at = (d: number) => new Date(Date.UTC(2026, 0, d));
    const text = extractiveSummary([
      { id: 'b', content: 'Lives in Lisbon', validFrom: at(2) },
      { id: 'a', content: 'Prefers e-mail.', validFrom: at(1) },
      { id: 'c', content: 'prefers   E-MAIL', validFrom: at(3) },
    ]);
    expect(text).toBe('Lives in Lisbon. prefers E-MAIL.');
    const inputs = Array.from({ length: MAX_SUMMARY_SENTENCES + 3 }, (_, i) => ({
      id: `m${i}`,
      content: `Fact ${i}.`,
      validFrom: at(i + 1),
    }));
    const capped = extractiveSummary(inputs);
    expect(capped.split('. ').length).toBe(MAX_SUMMARY_SENTENCES);
    expect(capped.endsWith(`Fact ${MAX_SUMMARY_SENTENCES + 2}.`)).toBe(true);
  });
});
