import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RRF_K, reciprocalRankFusion } from '../../../src/substrate/search/rrf.js';

const idList = fc.array(fc.constantFrom(...'abcdefghijklmnop'.split('')), { maxLength: 12 });

describe('reciprocal rank fusion', () => {
  it('scores each document by the sum of 1/(k + rank) over the lists it appears in', () => {
    const fused = reciprocalRankFusion([
      ['a', 'b', 'c'],
      ['c', 'a'],
    ]);
    expect(fused.map((f) => f.id)).toEqual(['a', 'c', 'b']);
    expect(fused[0]).toEqual({ id: 'a', score: 1 / 61 + 1 / 62, ranks: [1, 2] });
    expect(fused[1]).toEqual({ id: 'c', score: 1 / 63 + 1 / 61, ranks: [3, 1] });
    expect(fused[2]).toEqual({ id: 'b', score: 1 / 62, ranks: [2, undefined] });
  });

  it('promotes a document good in both lists over one that is first in a single list', () => {
    const fused = reciprocalRankFusion([
      ['x', 'both'],
      ['y', 'both'],
    ]);
    expect(fused[0]?.id).toBe('both');
  });

  it('counts only the first occurrence of an id within a list, and honours the limit', () => {
    const fused = reciprocalRankFusion([['a', 'a', 'b'], []], { limit: 1 });
    expect(fused).toEqual([{ id: 'a', score: 1 / (RRF_K + 1), ranks: [1, undefined] }]);
    expect(reciprocalRankFusion([])).toEqual([]);
  });

  it('property: returns unique ids, sorted by non-increasing score, covering every input id', () => {
    fc.assert(
      fc.property(fc.array(idList, { maxLength: 4 }), fc.integer({ min: 0, max: 100 }), (lists, k) => {
        const fused = reciprocalRankFusion(lists, { k });
        const ids = fused.map((f) => f.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(new Set(ids)).toEqual(new Set(lists.flat()));
        for (let i = 1; i < fused.length; i++) expect(fused[i]!.score).toBeLessThanOrEqual(fused[i - 1]!.score);
      }),
    );
  });

  it('property: a document first in every list ranks first', () => {
    fc.assert(
      fc.property(fc.array(idList, { minLength: 1, maxLength: 4 }), (lists) => {
        const withTop = lists.map((l) => ['top', ...l]);
        expect(reciprocalRankFusion(withTop)[0]?.id).toBe('top');
      }),
    );
  });

  it('property: moving a document up in one list never lowers its score', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...'abcdefgh'.split('')), { minLength: 2 }),
        idList,
        fc.nat(),
        (list, other, seed) => {
          const from = 1 + (seed % (list.length - 1));
          const target = list[from]!;
          const promoted = [...list];
          [promoted[from - 1], promoted[from]] = [promoted[from]!, promoted[from - 1]!];
          const score = (l: string[]) => reciprocalRankFusion([l, other]).find((f) => f.id === target)!.score;
          expect(score(promoted)).toBeGreaterThan(score(list));
        },
      ),
    );
  });
});
