import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ACTS,
  ACT_RULES,
  RULES,
  RULE_EXEMPTIONS,
  eventAsProcessed,
  mayProcess,
  type Act,
  type ProcessedRecord,
  type ProcessingContext,
  type Rule,
} from '../../../src/governance/read/processing-judge.js';
import { restrictionSnapshot } from '../../../src/governance/rights/restriction.js';
import type { EventRecord } from '../../../src/substrate/model/records.js';

const hashesOf = (s: string) => [`h:${s}`];
const now = new Date('2026-06-01T00:00:00Z');

/** Ann restricted processing; Ben objected to marketing. */
const restrictions = restrictionSnapshot(
  [
    { subjectHash: 'h:ann', purposes: null },
    { subjectHash: 'h:ben', purposes: ['marketing'] },
  ],
  hashesOf,
);

const ctx = (over: Partial<ProcessingContext> = {}): ProcessingContext => ({
  tenant: 't1',
  scopes: ['principal:agent-7', 'tenant'],
  purposes: ['support', 'marketing'],
  restrictions,
  now,
  about: ['cleo'],
  ...over,
});

/** A record that passes every rule of every act. */
const clean = (): ProcessedRecord => ({
  _id: 'mem_1',
  tenant: 't1',
  scope: 'principal:agent-7',
  subjects: ['cleo'],
  status: 'active',
  validFrom: new Date('2026-01-01T00:00:00Z'),
  validTo: null,
});

/** The same record broken in exactly one rule. */
const breaking: Record<Rule, (r: ProcessedRecord) => ProcessedRecord> = {
  tenant: (r) => ({ ...r, tenant: 't2' }),
  'owner-scope': (r) => ({ ...r, scope: 'principal:agent-9' }),
  erased: (r) => ({ ...r, status: 'deleted' }),
  lifecycle: (r) => ({ ...r, status: 'rejected' }),
  held: (r) => ({ ...r, restrictedBy: ['hold_1'] }),
  restricted: (r) => ({ ...r, subjects: ['cleo', 'ann'] }),
  objected: (r) => ({ ...r, subjects: ['cleo', 'ben'] }),
  'valid-time': (r) => ({ ...r, validTo: new Date('2026-05-01T00:00:00Z') }),
  contested: (r) => ({ ...r, contestedBy: ['rect_1'] }),
  stale: (r) => ({ ...r, stale: { because: 'rect_1', since: now } }),
  quarantined: (r) => ({ ...r, status: 'candidate', quarantinedFor: ['external-content:fetched-document'] }),
  'about-subject': (r) => ({ ...r, subjects: ['dora'] }),
};

describe('the processing judge', () => {
  it('allows a record that breaks no rule, for every act', () => {
    for (const act of ACTS) expect(mayProcess(act, clean(), ctx())).toEqual({ allowed: true });
  });

  it('refuses a record that breaks one rule exactly when the act lists that rule', () => {
    for (const act of ACTS) {
      for (const rule of RULES) {
        const verdict = mayProcess(act, breaking[rule](clean()), ctx());
        const binds = ACT_RULES[act].includes(rule);
        // `lifecycle` also refuses what `erased` and `quarantined` refuse, for acts that list them after it.
        if (binds) expect(verdict, `${act} × ${rule}`).toEqual({ allowed: false, rule });
        else if (rule === 'erased' || rule === 'quarantined')
          expect(verdict.allowed || verdict.rule === 'lifecycle', `${act} × ${rule}`).toBe(true);
        else expect(verdict, `${act} × ${rule}`).toEqual({ allowed: true });
      }
    }
  });

  it('says why for every rule an act does not apply', () => {
    for (const act of ACTS) {
      for (const rule of RULES) {
        if (ACT_RULES[act].includes(rule)) continue;
        const why = RULE_EXEMPTIONS[act]?.[rule];
        // Tenant and the record's status rules that other rules subsume need no exemption.
        if (rule === 'erased' || rule === 'quarantined' || rule === 'lifecycle') continue;
        expect(why, `${act} × ${rule} has no stated exemption`).toMatch(/\w/);
      }
    }
  });

  it('binds an objection to every purpose the actor may process for, not the one it names', () => {
    const objected = breaking.objected(clean());
    expect(mayProcess('cite', objected, ctx({ purposes: ['support', 'marketing'] }))).toEqual({
      allowed: false,
      rule: 'objected',
    });
    expect(mayProcess('cite', objected, ctx({ purposes: ['support'] }))).toEqual({ allowed: true });
    expect(mayProcess('consolidate', objected, ctx({ purposes: 'any' }))).toEqual({
      allowed: false,
      rule: 'objected',
    });
  });

  it('follows a restriction along lineage to records derived from the subject’s, whoever they are labelled with', () => {
    const following = restrictionSnapshot(
      [
        { subjectHash: 'h:ann', purposes: null, derivedIds: ['mem_view_of_ann'] },
        { subjectHash: 'h:ben', purposes: ['marketing'], derivedIds: ['mem_view_of_ben'] },
      ],
      hashesOf,
    );
    const about = (id: string): ProcessedRecord => ({ ...clean(), _id: id, subjects: ['dora'] });
    const c = ctx({ restrictions: following });
    expect(mayProcess('cite', about('mem_view_of_ann'), c)).toEqual({ allowed: false, rule: 'restricted' });
    expect(mayProcess('cite', about('mem_view_of_ben'), c)).toEqual({ allowed: false, rule: 'objected' });
    expect(
      mayProcess('cite', about('mem_view_of_ben'), ctx({ restrictions: following, purposes: ['support'] })),
    ).toEqual({ allowed: true });
    expect(mayProcess('cite', about('mem_other'), c)).toEqual({ allowed: true });
    expect(following.bars(['dora'], 'support', 'mem_view_of_ann')).toBe(true);
    expect(following.bars(['dora'], 'support')).toBe(false);
  });

  it('reads no event a rectification found wrong as evidence, nor lets a write cite it', () => {
    const event = {
      _id: 'evt_1',
      tenant: 't1',
      scope: 'principal:agent-7',
      subjects: ['cleo'],
      deleted: false,
    } as unknown as EventRecord;
    expect(mayProcess('evidence', eventAsProcessed(event), ctx())).toEqual({ allowed: true });
    const corrected = eventAsProcessed({ ...event, correctedBy: ['rct_1'] });
    expect(mayProcess('evidence', corrected, ctx())).toEqual({ allowed: false, rule: 'contested' });
    expect(mayProcess('cite', corrected, ctx())).toEqual({ allowed: false, rule: 'contested' });
    expect(mayProcess('evidence', eventAsProcessed({ ...event, deleted: true }), ctx())).toEqual({
      allowed: false,
      rule: 'erased',
    });
  });

  it('fails closed on governance it cannot read', () => {
    const unreadable: ProcessedRecord[] = [
      { ...clean(), status: 'nonsense' as never },
      { ...clean(), restrictedBy: 'hold_1' as never },
      { ...clean(), contestedBy: 'rect_1' as never },
      { ...clean(), validTo: new Date('not a date') },
      { ...clean(), subjects: 'cleo' as never },
      { ...clean(), scope: undefined },
    ];
    for (const record of unreadable) expect(mayProcess('consolidate', record, ctx()).allowed).toBe(false);
  });

  it('exports nothing when the request names no subject', () => {
    expect(mayProcess('export', clean(), ctx({ about: [] }))).toEqual({ allowed: false, rule: 'about-subject' });
    const { about: _omitted, ...noAbout } = ctx();
    expect(mayProcess('export', clean(), noAbout)).toEqual({ allowed: false, rule: 'about-subject' });
  });

  it('agrees with a rule-by-rule oracle on random records', () => {
    const arbRecord = fc.record({
      tenant: fc.constantFrom('t1', 't2'),
      scope: fc.constantFrom('principal:agent-7', 'principal:agent-9', 'tenant'),
      subjects: fc.subarray(['ann', 'ben', 'cleo', 'dora'], { minLength: 1 }),
      status: fc.constantFrom('candidate', 'active', 'disputed', 'superseded', 'expired', 'rejected', 'deleted'),
      held: fc.boolean(),
      ended: fc.boolean(),
      contested: fc.boolean(),
      stale: fc.boolean(),
      quarantined: fc.boolean(),
    });
    const act = fc.constantFrom<Act>(...ACTS);
    fc.assert(
      fc.property(arbRecord, act, (a, act) => {
        const record: ProcessedRecord = {
          _id: 'mem_x',
          tenant: a.tenant,
          scope: a.scope,
          subjects: a.subjects,
          status: a.status as ProcessedRecord['status'],
          ...(a.held ? { restrictedBy: ['hold_1'] } : {}),
          validTo: a.ended ? new Date('2026-05-01T00:00:00Z') : null,
          ...(a.contested ? { contestedBy: ['rect_1'] } : {}),
          ...(a.stale ? { stale: { because: 'rect_1', since: now } } : {}),
          ...(a.quarantined ? { quarantinedFor: ['instruction-like:override'] } : {}),
        };
        // The oracle, written from the table's words rather than the judge's code.
        const statuses: Record<Act, string[]> = {
          cite: ['active', 'disputed', 'superseded'],
          evidence: ['active', 'disputed', 'superseded'],
          consolidate: ['active'],
          export: ['candidate', 'active', 'disputed', 'superseded', 'expired', 'rejected', 'deleted'],
          correct: ['active', 'disputed'],
        };
        const breaks: Record<Rule, boolean> = {
          tenant: a.tenant !== 't1',
          'owner-scope': a.scope === 'principal:agent-9',
          erased: a.status === 'deleted',
          lifecycle: !statuses[act].includes(a.status),
          quarantined: a.status === 'candidate' && a.quarantined,
          held: a.held,
          restricted: a.subjects.includes('ann'),
          objected: a.subjects.includes('ben'),
          'valid-time': a.ended,
          contested: a.contested,
          stale: a.stale,
          'about-subject': !a.subjects.includes('cleo'),
        };
        const expected = !ACT_RULES[act].some((rule) => breaks[rule]);
        expect(mayProcess(act, record, ctx()).allowed).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
