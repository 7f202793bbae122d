import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chainLinkId, findChainHead } from '../../../src/substrate/mongo/hash-chain.js';

/** A chain of `length` links held as `_id` lookups, counting the lookups made. */
function chainOf(length: number) {
  let lookups = 0;
  const bySeq = async (seq: number) => {
    lookups++;
    return seq >= 1 && seq <= length ? { seq } : null;
  };
  return { bySeq, lookups: () => lookups };
}

describe('the head of a hash chain kept by seq', () => {
  it('is the last link, from any link known below it, in a number of lookups that grows with the log of the gap', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 100_000 }), fc.nat(), async (length, at) => {
        const chain = chainOf(length);
        const known = length === 0 ? null : { seq: (at % length) + 1 };
        const head = await findChainHead(chain.bySeq, known);
        expect(head?.seq ?? 0).toBe(length);
        const gap = length - (known?.seq ?? 0);
        expect(chain.lookups()).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(gap + 2)) + 2);
      }),
      { numRuns: 300 },
    );
  });

  it('answers nothing for an empty chain, after one lookup', async () => {
    const chain = chainOf(0);
    expect(await findChainHead(chain.bySeq, null)).toBeNull();
    expect(chain.lookups()).toBe(1);
  });

  it('gives ids that sort as their seqs do', () => {
    const seqs = [1, 2, 9, 10, 99, 100, 12_345, 10 ** 12];
    const ids = seqs.map((s) => chainLinkId('t-1', s));
    expect([...ids].sort()).toEqual(ids);
    expect(chainLinkId('t-1', 7)).toBe('t-1:000000000000007');
  });
});
