/**
 * Reciprocal rank fusion, done in the client because the local Elasticsearch has no server-side RRF
 * (and the production one would need a licence for it). Pure code.
 */

/** The constant of Cormack et al. (2009): damps the weight of the very top ranks. */
export const RRF_K = 60;

/** One fused result: its score and its 1-based rank in each input list (undefined where absent). */
export interface FusedItem {
  id: string;
  score: number;
  ranks: (number | undefined)[];
}

/**
 * Fuses ranked id lists: score(d) = Σ 1 / (k + rank_i(d)). Within one list only an id's first occurrence
 * counts. Ties break on the best single rank, then on the id, so the order is deterministic.
 */
export function reciprocalRankFusion(
  lists: readonly (readonly string[])[],
  options: { k?: number; limit?: number } = {},
): FusedItem[] {
  const k = options.k ?? RRF_K;
  if (!(k >= 0)) throw new RangeError('k must be non-negative');
  const fused = new Map<string, FusedItem>();
  lists.forEach((list, listIndex) => {
    list.forEach((id, position) => {
      let item = fused.get(id);
      if (item === undefined) {
        item = { id, score: 0, ranks: lists.map(() => undefined) };
        fused.set(id, item);
      }
      if (item.ranks[listIndex] !== undefined) return;
      const rank = position + 1;
      item.ranks[listIndex] = rank;
      item.score += 1 / (k + rank);
    });
  });
  const bestRank = (item: FusedItem): number => Math.min(...item.ranks.map((r) => r ?? Infinity));
  const sorted = [...fused.values()].sort(
    (a, b) => b.score - a.score || bestRank(a) - bestRank(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  return options.limit === undefined ? sorted : sorted.slice(0, Math.max(0, options.limit));
}
