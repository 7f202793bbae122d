import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  judge,
  kleeneAnd,
  lifecycleTruth,
  policyTruth,
  scopeTruth,
  type ReaderView,
  type Truth,
} from '../../../src/governance/read/admissibility.js';
import { MEMORY_STATUSES } from '../../../src/shared/lifecycle.js';
import { SENSITIVITIES, type MemoryRecord } from '../../../src/substrate/model/records.js';

const truth = fc.constantFrom<Truth>(1, 0, 'unknown');
const view = (over: Partial<ReaderView> = {}): ReaderView => ({
  scopes: ['principal:agent-7', 'tenant'],
  sensitivities: ['public', 'internal', 'confidential'],
  intent: 'current',
  now: new Date('2026-06-01T00:00:00Z'),
  ...over,
});
const record = (over: Partial<MemoryRecord> = {}): Partial<MemoryRecord> => ({
  scope: 'principal:agent-7',
  status: 'active',
  policy: { purpose: 'support', sensitivity: 'internal', jurisdiction: 'PT', retentionClass: 'r' },
  validFrom: new Date('2026-01-01T00:00:00Z'),
  validTo: null,
  ...over,
});

describe('strong-Kleene AND', () => {
  it('follows the truth table for two operands', () => {
    const table: [Truth, Truth, Truth][] = [
      [1, 1, 1],
      [1, 0, 0],
      [1, 'unknown', 'unknown'],
      [0, 0, 0],
      [0, 'unknown', 0],
      ['unknown', 'unknown', 'unknown'],
    ];
    for (const [a, b, both] of table) {
      expect(kleeneAnd([a, b])).toBe(both);
      expect(kleeneAnd([b, a])).toBe(both);
    }
  });

  it('is 1 only when every operand is 1, and an unknown never becomes 1', () => {
    fc.assert(
      fc.property(fc.array(truth, { minLength: 1, maxLength: 6 }), (values) => {
        const result = kleeneAnd(values);
        expect(result === 1).toBe(values.every((v) => v === 1));
        if (values.includes('unknown')) expect(result).not.toBe(1);
        if (values.includes(0)) expect(result).toBe(0);
      }),
      { numRuns: 500 },
    );
  });
});

describe('admissibility of a record', () => {
  it('does not serve a contested or stale record as current to a context read, but does in history and to a duty', () => {
    const since = new Date('2026-05-01T00:00:00Z');
    for (const marked of [
      record({ contestedBy: ['rec_1'] }),
      record({ stale: { because: 'rectification:rec_1', since } }),
    ]) {
      expect(lifecycleTruth(marked, view())).toBe(0);
      expect(lifecycleTruth(marked, view({ intent: 'history' }))).toBe(1);
      expect(lifecycleTruth(marked, view({ duty: true }))).toBe(1);
    }
    // A contest that was taken back leaves an empty list: current again.
    expect(lifecycleTruth(record({ contestedBy: [] }), view())).toBe(1);
    // An unreadable contest list is unknown, never admissible.
    expect(lifecycleTruth(record({ contestedBy: 'rec_1' as never }), view())).toBe('unknown');
  });

  it('admits the reader’s own active record it may read', () => {
    expect(judge(record(), view())).toEqual({ axes: { scope: 1, policy: 1, lifecycle: 1 }, admissible: 1 });
  });

  it('refuses another principal’s record, and reads it only for a tenant-wide duty', () => {
    expect(scopeTruth(record({ scope: 'principal:agent-8' }), view())).toBe(0);
    expect(scopeTruth(record({ scope: 'principal:agent-8' }), view({ scopes: 'all' }))).toBe(1);
    expect(scopeTruth(record({ scope: 'tenant' }), view())).toBe(1);
  });

  it('calls missing or unreadable governance metadata unknown, on every axis, even for a tenant-wide reader', () => {
    for (const scope of [undefined, '', 'principal:', 'team:x', 42 as unknown as string]) {
      expect(scopeTruth(record({ scope }), view({ scopes: 'all' }))).toBe('unknown');
    }
    expect(policyTruth(record({ policy: undefined }), view())).toBe('unknown');
    expect(policyTruth(record({ policy: { sensitivity: 'secret' } as never }), view())).toBe('unknown');
    expect(lifecycleTruth(record({ status: 'limbo' as never }), view())).toBe('unknown');
    expect(lifecycleTruth(record({ restrictedBy: 'hold-1' as never }), view())).toBe('unknown');
    expect(lifecycleTruth(record({ validFrom: new Date('nope') }), view({ intent: 'as-of', asOf: new Date() }))).toBe(
      'unknown',
    );
  });

  it('serves statuses by intent, never a held record', () => {
    const statuses = (intent: ReaderView['intent']) =>
      MEMORY_STATUSES.filter((status) => lifecycleTruth(record({ status }), view({ intent, asOf: new Date() })) === 1);
    expect(statuses('current')).toEqual(['active', 'disputed']);
    expect(statuses('history')).toEqual(['active', 'disputed', 'superseded']);
    expect(lifecycleTruth(record({ restrictedBy: ['hold-1'] }), view())).toBe(0);
  });

  it('never serves a fact whose valid time has ended as current, and still answers history with it', () => {
    const now = new Date('2026-06-01T00:00:00Z');
    const ended = (iso: string) => record({ validTo: new Date(iso) });
    expect(lifecycleTruth(ended('2026-05-31T23:59:59Z'), view({ now }))).toBe(0);
    expect(lifecycleTruth(ended('2026-06-01T00:00:00Z'), view({ now }))).toBe(0);
    expect(lifecycleTruth(ended('2026-06-01T00:00:01Z'), view({ now }))).toBe(1);
    expect(lifecycleTruth(ended('2026-05-31T23:59:59Z'), view({ now, intent: 'history' }))).toBe(1);
    expect(lifecycleTruth(record({ validTo: 'soon' as never }), view({ now }))).toBe('unknown');
    expect(lifecycleTruth(record(), view({ now: new Date('nope') }))).toBe('unknown');
  });

  it('shows a duty read every status short of erasure, and held records only to a reader of holds', () => {
    const statuses = (over: Partial<ReaderView>) =>
      MEMORY_STATUSES.filter(
        (status) => lifecycleTruth(record({ status }), view({ intent: 'history', ...over })) === 1,
      );
    expect(statuses({ duty: true })).toEqual(['candidate', 'active', 'disputed', 'superseded', 'expired', 'rejected']);
    const held = record({ restrictedBy: ['hold-1'] });
    expect(lifecycleTruth(held, view({ duty: true }))).toBe(0);
    expect(lifecycleTruth(held, view({ duty: true, readsRestricted: true }))).toBe(1);
    expect(
      lifecycleTruth(
        record({ status: 'deleted', restrictedBy: ['hold-1'] }),
        view({ duty: true, readsRestricted: true }),
      ),
    ).toBe(0);
  });

  it('answers as-of questions by valid time, half-open at validTo', () => {
    const r = record({ status: 'superseded', validTo: new Date('2026-06-01T00:00:00Z') });
    const at = (iso: string) => lifecycleTruth(r, view({ intent: 'as-of', asOf: new Date(iso) }));
    expect(at('2025-12-31T23:59:59Z')).toBe(0);
    expect(at('2026-01-01T00:00:00Z')).toBe(1);
    expect(at('2026-05-31T23:59:59Z')).toBe(1);
    expect(at('2026-06-01T00:00:00Z')).toBe(0);
  });

  it('never admits a record with any field scrambled to something unreadable', () => {
    const junk = fc.oneof(fc.constant(undefined), fc.constant(null), fc.string(), fc.integer(), fc.constant({}));
    fc.assert(
      fc.property(
        fc.constantFrom('scope', 'status', 'restrictedBy', 'policy', 'validFrom'),
        junk,
        fc.constantFrom<ReaderView['intent']>('current', 'history', 'as-of'),
        (field, value, intent) => {
          const r = { ...record(), [field]: value } as Partial<MemoryRecord>;
          const v = view({ intent, asOf: new Date('2026-03-01T00:00:00Z'), scopes: 'all' });
          const readable =
            (field === 'scope' && typeof value === 'string' && /^(tenant|principal:\S+)$/.test(value)) ||
            (field === 'status' &&
              typeof value === 'string' &&
              (MEMORY_STATUSES as readonly string[]).includes(value)) ||
            (field === 'restrictedBy' && value === undefined) ||
            (field === 'validFrom' && intent !== 'as-of');
          if (!readable) expect(judge(r, v).admissible).not.toBe(1);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('only sensitivities the purpose admits pass the policy axis', () => {
    for (const sensitivity of SENSITIVITIES) {
      const r = record({ policy: { purpose: 'p', sensitivity, jurisdiction: 'PT', retentionClass: 'r' } });
      expect(policyTruth(r, view())).toBe(sensitivity === 'special' ? 0 : 1);
    }
  });
});
