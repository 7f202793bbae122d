import { describe, expect, it } from 'vitest';
import { GENESIS_HASH, hashEntry, sealEntry, verifyChain } from '../../../src/governance/audit/audit-chain.js';
import type { AuditEntry } from '../../../src/governance/audit/audit-log.port.js';
import { buildChain, seeds } from './chain-fixtures.js';

const TENANT = 'acme';
const honest = (n = 6): AuditEntry[] => buildChain(TENANT, seeds(n));

/** A different character at `position` (hex stays hex, so hash fields stay well-formed). */
function flipChar(text: string, position = 0): string {
  const at = Math.min(position, Math.max(0, text.length - 1));
  const c = text[at] ?? '';
  const replacement = /[0-9a-f]/.test(c) ? (c === 'a' ? 'b' : 'a') : c === 'x' ? 'y' : 'x';
  return text.length === 0 ? 'x' : text.slice(0, at) + replacement + text.slice(at + 1);
}

describe('hashEntry', () => {
  it('hashes every field but hash, so the stored hash does not feed itself', () => {
    const [entry] = honest(1);
    expect(hashEntry(entry!)).toBe(entry!.hash);
    expect(hashEntry({ ...entry!, hash: 'f'.repeat(64) })).toBe(entry!.hash);
    expect(entry!.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not depend on the order the fields were written in', () => {
    const [entry] = honest(1);
    const reversed = Object.fromEntries(Object.entries(entry!).reverse()) as unknown as AuditEntry;
    expect(hashEntry(reversed)).toBe(entry!.hash);
  });

  it('starts a tenant chain from the genesis hash of 64 zeros', () => {
    expect(honest(1)[0]!.prevHash).toBe(GENESIS_HASH);
    expect(GENESIS_HASH).toBe('0'.repeat(64));
  });
});

describe('verifyChain', () => {
  it('accepts an honest chain and reports its length, head hash and last seq', () => {
    const chain = honest();
    expect(verifyChain(chain)).toEqual({ ok: true, count: 6, headHash: chain[5]!.hash, lastSeq: 6 });
    expect(verifyChain(chain, { tenant: TENANT, expectHeadHash: chain[5]!.hash }).ok).toBe(true);
  });

  it('accepts an empty chain, whose head is the genesis hash', () => {
    expect(verifyChain([])).toEqual({ ok: true, count: 0, headHash: GENESIS_HASH, lastSeq: 0 });
  });

  const fields: (keyof AuditEntry)[] = [
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
  it.each(fields)('catches a changed %s and names that entry', (field) => {
    for (const index of [0, 3, 5]) {
      const chain = honest();
      const entry = { ...chain[index]! } as Record<string, unknown>;
      const value = entry[field];
      if (field === 'seq') entry.seq = (value as number) + 10;
      else if (field === 'outcome') entry.outcome = value === 'ok' ? 'error' : 'ok';
      else if (field === 'details') entry.details = { ...(value as object), count: 999 };
      else entry[field] = flipChar(String(value), 5);
      chain[index] = entry as unknown as AuditEntry;
      const result = verifyChain(chain);
      expect(result.ok, `${field} at ${index}`).toBe(false);
      if (!result.ok) expect(result.firstBad.index).toBe(index);
    }
  });

  it('catches a value flipped inside details as a hash mismatch', () => {
    const chain = honest();
    chain[2] = { ...chain[2]!, details: { ...chain[2]!.details, stage: 'tampered' } };
    expect(verifyChain(chain)).toEqual({
      ok: false,
      firstBad: { seq: 3, index: 2, reason: 'hash mismatch: the entry was changed after it was sealed' },
    });
  });

  it('catches a field added after sealing', () => {
    const chain = honest();
    chain[1] = { ...chain[1]!, extra: 'x' } as AuditEntry;
    expect(verifyChain(chain)).toMatchObject({ ok: false, firstBad: { index: 1, reason: /hash mismatch/ } });
  });

  it('catches a removed entry in the middle as a seq gap at the entry after it', () => {
    const chain = honest();
    chain.splice(2, 1);
    expect(verifyChain(chain)).toEqual({
      ok: false,
      firstBad: { seq: 4, index: 2, reason: 'seq gap: expected seq 3, found 4 (entries missing or reordered)' },
    });
  });

  it('catches a removed first entry, because a full chain must start at seq 1', () => {
    const chain = honest().slice(1);
    expect(verifyChain(chain)).toMatchObject({
      ok: false,
      firstBad: { seq: 2, index: 0, reason: /seq gap: expected seq 1/ },
    });
  });

  it('catches a removed last entry only against an anchored head hash', () => {
    const chain = honest();
    const head = chain[5]!.hash;
    chain.pop();
    expect(verifyChain(chain).ok).toBe(true);
    expect(verifyChain(chain, { expectHeadHash: head })).toMatchObject({
      ok: false,
      firstBad: { seq: 6, index: 5, reason: /head mismatch/ },
    });
  });

  it('catches a removed entry even when later seqs were renumbered to hide the gap', () => {
    const chain = honest();
    chain.splice(2, 1);
    const renumbered = chain.map((e, i) => (i >= 2 ? sealEntry({ ...e, seq: e.seq - 1 }) : e));
    expect(verifyChain(renumbered)).toMatchObject({
      ok: false,
      firstBad: { seq: 3, index: 2, reason: /prevHash mismatch/ },
    });
  });

  it('catches two swapped entries at the first of them', () => {
    const chain = honest();
    [chain[1], chain[4]] = [chain[4]!, chain[1]!];
    expect(verifyChain(chain)).toMatchObject({
      ok: false,
      firstBad: { seq: 5, index: 1, reason: /seq gap: expected seq 2/ },
    });
    const adjacent = honest();
    [adjacent[3], adjacent[4]] = [adjacent[4]!, adjacent[3]!];
    expect(verifyChain(adjacent)).toMatchObject({ ok: false, firstBad: { index: 3 } });
  });

  it('names an entry that goes backwards as out of order', () => {
    const backwards = honest(3);
    expect(verifyChain([backwards[0]!, backwards[1]!, backwards[0]!])).toMatchObject({
      ok: false,
      firstBad: { seq: 1, index: 2, reason: 'out of order: expected seq 3, found 1 (entries reordered)' },
    });
  });

  it('catches a duplicated entry as a duplicate seq', () => {
    const chain = honest();
    chain.splice(3, 0, chain[2]!);
    expect(verifyChain(chain)).toEqual({ ok: false, firstBad: { seq: 3, index: 3, reason: 'duplicate seq 3' } });
  });

  it("catches another tenant's entry, even when honestly sealed", () => {
    const chain = honest();
    expect(verifyChain(chain, { tenant: 'other' })).toEqual({
      ok: false,
      firstBad: { seq: 1, index: 0, reason: 'wrong tenant: expected other, found acme' },
    });
    chain[3] = sealEntry({ ...chain[3]!, tenant: 'other' });
    expect(verifyChain(chain)).toMatchObject({ ok: false, firstBad: { index: 3, reason: /tenant changed mid-chain/ } });
  });

  it('verifies a later range from its expected seq and the hash before it', () => {
    const chain = honest(8);
    const range = chain.slice(3);
    expect(verifyChain(range).ok).toBe(false);
    expect(verifyChain(range, { expectFromSeq: 4, expectPrevHash: chain[2]!.hash })).toMatchObject({
      ok: true,
      count: 5,
    });
    expect(verifyChain(range, { expectFromSeq: 4, expectPrevHash: chain[1]!.hash })).toMatchObject({
      ok: false,
      firstBad: { seq: 4, index: 0, reason: /prevHash mismatch: the first entry/ },
    });
  });

  it('names a malformed entry without quoting its content', () => {
    const chain: unknown[] = honest(3);
    chain[1] = { ...(chain[1] as object), outcome: 'maybe' };
    expect(verifyChain(chain as AuditEntry[])).toEqual({
      ok: false,
      firstBad: { seq: 2, index: 1, reason: 'malformed entry: outcome must be ok, refused or error' },
    });
    const nested = honest(1);
    (nested[0]!.details as Record<string, unknown>).deep = { x: 1 };
    expect(verifyChain(nested)).toMatchObject({
      ok: false,
      firstBad: { reason: 'malformed entry: details.deep must be a scalar' },
    });
  });
});
