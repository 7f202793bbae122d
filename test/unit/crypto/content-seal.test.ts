import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSealed, keyPageOf, open, seal, SealBroken } from '../../../src/substrate/crypto/content-seal.js';

describe('content sealed under a record’s data key', () => {
  const key = randomBytes(32);
  const page = `kp_${'0a'.repeat(16)}`;

  it('opens to what was sealed, for any text, in either format, and never shows it in the sealed form', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 500, unit: 'binary' }), fc.boolean(), (text, paged) => {
        const sealed = seal(key, 't1', 'mem_1', text, paged ? page : null);
        expect(isSealed(sealed)).toBe(true);
        expect(keyPageOf(sealed)).toBe(paged ? page : null);
        expect(open(key, 't1', 'mem_1', sealed)).toBe(text);
        if (text.length >= 8) expect(sealed.includes(text)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('names the key page in a v2 value, and no page in a v1 value written before pages', () => {
    expect(seal(key, 't1', 'mem_1', 'x', page).startsWith(`lethe-sealed:v2:${page}:`)).toBe(true);
    expect(seal(key, 't1', 'mem_1', 'x', null).startsWith('lethe-sealed:v1:')).toBe(true);
  });

  it('seals the same text differently every time (a fresh nonce)', () => {
    expect(seal(key, 't1', 'mem_1', 'same', page)).not.toBe(seal(key, 't1', 'mem_1', 'same', page));
  });

  it('does not open under another key, for another record, for another tenant, or when a byte changed', () => {
    for (const where of [page, null]) {
      const sealed = seal(key, 't1', 'mem_1', 'Ana moved to Porto', where);
      expect(() => open(randomBytes(32), 't1', 'mem_1', sealed)).toThrow(SealBroken);
      expect(() => open(key, 't1', 'mem_2', sealed)).toThrow(SealBroken);
      expect(() => open(key, 't2', 'mem_1', sealed)).toThrow(SealBroken);
      const body = sealed.slice(sealed.lastIndexOf(':') + 1);
      const flipped = `${body[0] === 'A' ? 'B' : 'A'}${body.slice(1)}`;
      expect(() => open(key, 't1', 'mem_1', sealed.replace(body, flipped))).toThrow(SealBroken);
    }
    expect(() => open(key, 't1', 'mem_1', 'lethe-sealed:v1:nonsense')).toThrow(SealBroken);
    expect(() => open(key, 't1', 'mem_1', `lethe-sealed:v2:${page}:nonsense`)).toThrow(SealBroken);
    expect(() => open(key, 't1', 'mem_1', 'lethe-sealed:v3:a:b')).toThrow(SealBroken);
  });

  it('reads no page from a v2 value whose page is not one the vault makes, whatever its bytes', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60, unit: 'binary' }), (odd) => {
        const named = keyPageOf(`lethe-sealed:v2:${odd}:AAAA:BBBB`);
        expect(named === null || /^kp_[0-9a-f]{32}$/.test(named)).toBe(true);
      }),
      { numRuns: 300 },
    );
    expect(keyPageOf(`lethe-sealed:v2:kp_${'0A'.repeat(16)}:a:b`)).toBeNull();
    expect(keyPageOf('lethe-sealed:v2:')).toBeNull();
    expect(() => seal(key, 't1', 'mem_1', 'x', 'kp_../../etc')).toThrow(/key page/);
  });

  it('names the record, never the content, when a seal does not open', () => {
    const sealed = seal(key, 't1', 'mem_1', 'Ana moved to Porto', page);
    expect(() => open(randomBytes(32), 't1', 'mem_1', sealed)).toThrow(/^sealed content of mem_1 does not open/);
  });
});
