import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSealed, open, seal, SealBroken } from '../../../src/substrate/crypto/content-seal.js';

describe('content sealed under a record’s data key', () => {
  const key = randomBytes(32);

  it('opens to what was sealed, for any text, and never shows it in the sealed form', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 500, unit: 'binary' }), (text) => {
        const sealed = seal(key, 't1', 'mem_1', text);
        expect(isSealed(sealed)).toBe(true);
        expect(open(key, 't1', 'mem_1', sealed)).toBe(text);
        if (text.length >= 8) expect(sealed.includes(text)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('seals the same text differently every time (a fresh nonce)', () => {
    expect(seal(key, 't1', 'mem_1', 'same')).not.toBe(seal(key, 't1', 'mem_1', 'same'));
  });

  it('does not open under another key, for another record, for another tenant, or when a byte changed', () => {
    const sealed = seal(key, 't1', 'mem_1', 'Ana moved to Porto');
    expect(() => open(randomBytes(32), 't1', 'mem_1', sealed)).toThrow(SealBroken);
    expect(() => open(key, 't1', 'mem_2', sealed)).toThrow(SealBroken);
    expect(() => open(key, 't2', 'mem_1', sealed)).toThrow(SealBroken);
    const body = sealed.slice(sealed.lastIndexOf(':') + 1);
    const flipped = `${body[0] === 'A' ? 'B' : 'A'}${body.slice(1)}`;
    expect(() => open(key, 't1', 'mem_1', sealed.replace(body, flipped))).toThrow(SealBroken);
    expect(() => open(key, 't1', 'mem_1', 'lethe-sealed:v1:nonsense')).toThrow(SealBroken);
  });

  it('names the record, never the content, when a seal does not open', () => {
    const sealed = seal(key, 't1', 'mem_1', 'Ana moved to Porto');
    expect(() => open(randomBytes(32), 't1', 'mem_1', sealed)).toThrow(/^sealed content of mem_1 does not open/);
  });
});
