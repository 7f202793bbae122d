import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { verifyChain } from '../../../src/governance/audit/audit-chain.js';
import type { AuditEntry, AuditValue } from '../../../src/governance/audit/audit-log.port.js';
import { buildChain, type EntrySeed } from './chain-fixtures.js';

const scalar: fc.Arbitrary<AuditValue> = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const seed: fc.Arbitrary<EntrySeed> = fc.record({
  actor: fc.string({ minLength: 1 }),
  action: fc.constantFrom('memory.created', 'erasure.completed', 'access.refused', 'hold.placed'),
  target: fc.option(fc.string(), { nil: null }),
  outcome: fc.constantFrom('ok' as const, 'refused' as const, 'error' as const),
  details: fc.dictionary(fc.string({ minLength: 1 }), scalar, { maxKeys: 5 }),
});
const tenant = fc.stringMatching(/^[a-z0-9][a-z0-9-]{1,20}$/);
const chainOf = (min: number) => fc.tuple(tenant, fc.array(seed, { minLength: min, maxLength: 25 }));

/** A value of the same kind that differs in canonical form. */
function changed(value: unknown): unknown {
  if (typeof value === 'string') return value.length === 0 ? 'x' : (value[0] === 'x' ? 'y' : 'x') + value.slice(1);
  if (typeof value === 'number') return value === 0 ? 1 : -value;
  if (typeof value === 'boolean') return !value;
  if (value === null) return 'x';
  return { ...(value as object), injected: 1 };
}

const FIELDS = [
  'tenant',
  'seq',
  'at',
  'actor',
  'action',
  'target',
  'outcome',
  'details',
  'idempotencyKey',
  'prevHash',
  'hash',
];

describe('verifyChain properties', () => {
  it('every honestly built chain verifies, with the last hash as head', () => {
    fc.assert(
      fc.property(chainOf(0), ([t, seeds]) => {
        const chain = buildChain(t, seeds);
        const result = verifyChain(chain, { tenant: t });
        expect(result).toEqual({
          ok: true,
          count: seeds.length,
          headHash: chain.at(-1)?.hash ?? '0'.repeat(64),
          lastSeq: seeds.length,
        });
      }),
    );
  });

  it('any single changed field is caught at exactly that entry', () => {
    fc.assert(
      fc.property(chainOf(1), fc.nat(), fc.constantFrom(...FIELDS), fc.nat(), ([t, seeds], i, field, key) => {
        const chain = buildChain(t, seeds);
        const index = i % chain.length;
        const entry = { ...chain[index]! } as Record<string, unknown>;
        if (field === 'outcome') entry.outcome = entry.outcome === 'ok' ? 'refused' : 'ok';
        else if (field === 'prevHash' || field === 'hash') {
          const h = entry[field] as string;
          entry[field] = (h[0] === 'a' ? 'b' : 'a') + h.slice(1);
        } else if (field === 'details') {
          const keys = Object.keys(entry.details as object);
          const k = keys[key % Math.max(1, keys.length)];
          const details = { ...(entry.details as Record<string, unknown>) };
          if (k === undefined) details.injected = 1;
          else details[k] = changed(details[k]);
          entry.details = details;
        } else entry[field] = changed(entry[field]);
        chain[index] = entry as unknown as AuditEntry;
        const result = verifyChain(chain);
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.firstBad.index).toBe(index);
      }),
    );
  });

  it('any single deleted entry is caught at its successor, or by the anchored head when it was the last', () => {
    fc.assert(
      fc.property(chainOf(1), fc.nat(), ([t, seeds], i) => {
        const chain = buildChain(t, seeds);
        const head = chain.at(-1)!.hash;
        const index = i % chain.length;
        chain.splice(index, 1);
        const result = verifyChain(chain, { expectHeadHash: head });
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.firstBad.index).toBe(index);
      }),
    );
  });

  it('any swap of two different entries is caught at the first of them', () => {
    fc.assert(
      fc.property(chainOf(2), fc.nat(), fc.nat(), ([t, seeds], a, b) => {
        const chain = buildChain(t, seeds);
        const i = a % chain.length;
        let j = b % chain.length;
        if (i === j) j = (j + 1) % chain.length;
        [chain[i], chain[j]] = [chain[j]!, chain[i]!];
        const result = verifyChain(chain);
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.firstBad.index).toBe(Math.min(i, j));
      }),
    );
  });

  it('any duplicated entry is caught at the copy', () => {
    fc.assert(
      fc.property(chainOf(1), fc.nat(), fc.nat(), ([t, seeds], a, b) => {
        const chain = buildChain(t, seeds);
        const source = a % chain.length;
        const at = source + 1 + (b % (chain.length - source)); // somewhere after the original
        chain.splice(at, 0, chain[source]!);
        const result = verifyChain(chain);
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.firstBad.index).toBe(at);
      }),
    );
  });
});
